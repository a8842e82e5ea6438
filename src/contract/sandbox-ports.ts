/**
 * How the gateway speaks to a sandbox's own ports, as the platform sets it per sandbox (`network.httpsPorts`,
 * `network.maskRequestHost`) and the catalog carries it: which ports serve HTTPS, and the Host header its services see.
 */

/** The most ports one sandbox may list as HTTPS. */
export const MAX_HTTPS_PORTS = 64;

/** The placeholder of a request host mask that stands for the port the request is for. */
export const PORT_PLACEHOLDER = `$\{PORT}`;

export const HOST_MASK_RULE = `a host name or IPv4 address with an optional :port, where $\{PORT} stands for the port the request is for, such as localhost:$\{PORT} or $\{PORT}-app.example.com`;

const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_WITH_PORT = new RegExp(`^${LABEL}(\\.${LABEL})*(:[0-9]{1,5})?$`);

/** The Host header a request for `port` carries to the sandbox under `mask`. */
export function maskedHost(mask: string, port: number): string {
  return mask.split(PORT_PLACEHOLDER).join(String(port));
}

/** Whether `mask` is a request host mask (HOST_MASK_RULE): with any port put in, a Host header of a name and optional port. */
export function isHostMask(mask: string): boolean {
  if (mask.length === 0 || mask.length > 253) return false;
  const host = maskedHost(mask, 65535);
  const port = /:([0-9]{1,5})$/.exec(host)?.[1];
  return HOST_WITH_PORT.test(host) && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
}
