/**
 * The AEAD ciphers shadowsocks-libev accepts (stream ciphers are deprecated and insecure; they are refused).
 * The same list is what `ss-server -h` prints under "Encrypt method" for the AEAD family.
 */
export const AEAD_METHODS = ['aes-128-gcm', 'aes-192-gcm', 'aes-256-gcm', 'chacha20-ietf-poly1305', 'xchacha20-ietf-poly1305'] as const;

export type AeadMethod = (typeof AEAD_METHODS)[number];

/**
 * How a sandbox uses the proxy (docs/design.md#proxy-modes): `local`, SOCKS5 on client.localPort; `transparent`,
 * every outgoing TCP connection through ss-redir. The template, the lab, verify and the Pulumi program all take it.
 */
export const CLIENT_MODES = ['local', 'transparent'] as const;
export type ClientMode = (typeof CLIENT_MODES)[number];

/** Transport modes of shadowsocks-libev's `mode` key. */
export const SS_MODES = ['tcp_only', 'udp_only', 'tcp_and_udp'] as const;
export type SsMode = (typeof SS_MODES)[number];

/** The transport protocols ss-server serves in a mode: the firewall opens exactly these and verify expects them. */
export function proxyProtocols(mode: SsMode): Array<'tcp' | 'udp'> {
  if (mode === 'tcp_only') return ['tcp'];
  if (mode === 'udp_only') return ['udp'];
  return ['tcp', 'udp'];
}
