/**
 * The version of envd's surface the agent implements, reported by the platform as `envdVersion`. E2B clients gate
 * features on it (octet-stream uploads from 0.5.7, file metadata from 0.6.2, watch entries from 0.6.3, network
 * mounts from 0.6.4), so it must be at least the newest gate the agent answers to, and never above what it does.
 */
export const ENVD_VERSION = '0.6.4';
