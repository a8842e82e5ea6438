/** The header that carries a sandbox's access token (envdAccessToken) on every request to its agent. */
export const ACCESS_TOKEN_HEADER = 'X-Access-Token';

/** The brand the E2B SDK sends (`E2b-Sandbox-Id`, `E2b-Sandbox-Port`); the gateway always accepts it too. */
export const E2B_BRAND = 'E2b';

/**
 * The header that carries a sandbox's traffic access token (trafficAccessToken in the create answer) on calls to its
 * ports other than the agent's, when the sandbox was created with `network.allowPublicTraffic: false`.
 */
export const TRAFFIC_ACCESS_TOKEN_HEADER = 'e2b-traffic-access-token';
