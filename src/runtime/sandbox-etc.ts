/** The files every sandbox gets in its /etc (written into its upper dir before start): pure renderers. */

export function renderHosts(hostname: string, address?: string): string {
  const lines = ['127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback', `127.0.1.1\t${hostname}`];
  if (address) lines.push(`${address}\t${hostname}`);
  return `${lines.join('\n')}\n`;
}

/** The host's resolv.conf minus loopback servers (a sandbox's own loopback has no resolver). */
export function renderResolvConf(hostResolvConf: string): string {
  const kept = hostResolvConf
    .split('\n')
    .filter((l) => !/^\s*nameserver\s+(127\.|::1\b)/.test(l))
    .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  return kept.length > 0 ? `${kept.join('\n')}\n` : '';
}

/** The IPv4 resolvers a resolv.conf names: the one destination of port 53 the sandbox guard lets through. */
export function nameserversOf(resolvConf: string): string[] {
  const out: string[] = [];
  for (const line of resolvConf.split('\n')) {
    const m = /^\s*nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}
