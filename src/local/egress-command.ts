/** The seed's egress check as a command inside a sandbox: what the lab's what-is-my-IP service sees of a request. */
import { type Lab, whoamiUrl } from '../lab';

/** curl through the proxy: the template's SOCKS5 port in local mode, a plain request in transparent mode (the NAT chain). */
export function egressCurl(lab: Lab): string {
  const socks = lab.mode === 'local' ? `--socks5-hostname 127.0.0.1:${lab.socksPort} ` : '';
  return `curl -sS --max-time 5 ${socks}${whoamiUrl(lab.plan.web, lab.plan.webHttpPort)}`;
}
