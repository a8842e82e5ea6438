/**
 * Sandbox IDs are one DNS label's worth of letters, digits, `_` and `-`, so that the host form
 * `{port}-{sandboxID}.{domain}` can carry them and no ID can smuggle separators into keys or logs. The platform
 * generates lower-case letters and digits only (what E2B clients assume for host routing).
 */
export const SANDBOX_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
