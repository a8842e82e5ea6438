/**
 * A host that reaches the Debian mirror only through an HTTP proxy (a corporate proxy, or a lab host with no route
 * out) gives its platform the usual variables; template build steps on the host network get them too, so `apt-get`
 * and `curl` in a RUN step go the same way. They are the build's, never the template's: a sandbox made from the
 * template does not inherit them.
 */
export const PROXY_VARIABLES = ['http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'] as const;

/** The proxy variables set (non-empty) in `env`. */
export function buildProxyEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) {
    const value = env[name];
    if (value) out[name] = value;
  }
  return out;
}
