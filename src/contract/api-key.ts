/**
 * The form of the platform API keys E2B's SDKs from 2.27 to 2.45 check client-side before sending a request: `e2b_`
 * and lower-case hex digits. The platform makes its keys in it (src/platform/teams/api-keys.ts), and so does the Pulumi
 * program (infra/api-key.ts); the prefix also makes a leaked key recognisable.
 */
export const API_KEY_PREFIX = 'e2b_';
export const E2B_SDK_KEY_FORM = /^e2b_[0-9a-f]+$/;
