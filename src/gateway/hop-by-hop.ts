import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/**
 * Fields that describe one connection and must not be forwarded (RFC 9110 section 7.6.1), plus
 * Proxy-Authorization (meant for this proxy) and Expect (the gateway already answered 100-continue).
 * Node writes its own Connection, Keep-Alive and Transfer-Encoding on each side.
 */
const ALWAYS_DROPPED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'expect',
]);

/** Connection values that list no field beyond the ones always dropped. */
const NOTHING_LISTED = new Set(['keep-alive', 'close', 'Keep-Alive', 'Close', '']);

/** Names a Connection header lists are hop-by-hop too (RFC 9110 section 7.6.1). */
function listedInConnection(connection: string | string[] | undefined): Set<string> | undefined {
  if (connection === undefined) return undefined;
  // The usual values name no extra field; skip the split for them.
  if (typeof connection === 'string' && NOTHING_LISTED.has(connection)) return undefined;
  const text = Array.isArray(connection) ? connection.join(',') : connection;
  const names = text
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '' && n !== 'close' && n !== 'keep-alive');
  return names.length > 0 ? new Set(names) : undefined;
}

/** Copies end-to-end fields only; `via` is appended (RFC 9110 section 7.6.3). */
export function endToEndHeaders(headers: IncomingHttpHeaders, via: string): OutgoingHttpHeaders {
  const extra = listedInConnection(headers.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    if (ALWAYS_DROPPED.has(name) || (extra?.has(name))) continue;
    out[name] = headers[name];
  }
  out.via = headers.via === undefined ? via : `${headers.via}, ${via}`;
  return out;
}
