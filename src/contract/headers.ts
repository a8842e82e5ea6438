/** The header that carries a sandbox's access token (envdAccessToken) on every request to its agent. */
export const ACCESS_TOKEN_HEADER = 'X-Access-Token';

/** The brand the E2B SDK sends (`E2b-Sandbox-Id`, `E2b-Sandbox-Port`); the gateway always accepts it too. */
export const E2B_BRAND = 'E2b';
