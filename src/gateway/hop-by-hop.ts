import type { IncomingHttpHeaders } from 'node:http';

/**
 * Fields that describe one connection and are never forwarded (RFC 9110 section 7.6.1), plus
 * Proxy-Authorization (meant for this proxy), Expect (the gateway already answered 100-continue) and the two
 * framing fields: the gateway frames every message it forwards itself (see framing.ts), so a client's or a
 * sandbox's Content-Length / Transfer-Encoding is never copied, and no Connection list can remove the framing.
 */
export const HOP_BY_HOP_FIELDS: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'expect',
  'trailer',
];

const ALWAYS_DROPPED = new Set(HOP_BY_HOP_FIELDS);

/** Connection values that list no field beyond the ones always dropped (the usual ones, checked without a split). */
const NOTHING_LISTED = new Set(['keep-alive', 'close', 'Keep-Alive', 'Close', '']);

/**
 * Names a Connection header lists are hop-by-hop too (RFC 9110 section 7.6.1). The framing fields are never taken
 * from this list: they are already handled by the gateway, and dropping one of them here is how a body used to
 * reach a sandbox without its framing.
 */
export function listedInConnection(connection: string | string[] | undefined): Set<string> | undefined {
  if (connection === undefined) return undefined;
  if (typeof connection === 'string' && NOTHING_LISTED.has(connection)) return undefined;
  const text = Array.isArray(connection) ? connection.join(',') : connection;
  const names = text
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '' && n !== 'close' && !ALWAYS_DROPPED.has(n));
  return names.length > 0 ? new Set(names) : undefined;
}

/**
 * The request fields to send upstream, as a flat [name, value, ...] list in the client's order and spelling:
 * end-to-end fields only, X-Forwarded-For and Via appended (RFC 9110 section 7.6.3). The framing is added by the
 * caller from what the parser established, never from these fields. `dropped` (lower case) are left out too: the
 * credentials that port may not see (port-access.ts). `host`, when given, is the Host the upstream gets instead of
 * the client's (a sandbox's request host mask).
 */
export function forwardedRequestHeaders(
  rawHeaders: readonly string[],
  headers: IncomingHttpHeaders,
  via: string,
  remote: string | undefined,
  dropped?: ReadonlySet<string>,
  host?: string,
): string[] {
  const extra = listedInConnection(headers.connection);
  const out: string[] = host === undefined ? [] : ['host', host];
  let priorVia: string | undefined;
  let priorFor: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const lower = name.toLowerCase();
    if (ALWAYS_DROPPED.has(lower) || extra?.has(lower) || dropped?.has(lower)) continue;
    if (lower === 'via') {
      priorVia = priorVia === undefined ? rawHeaders[i + 1] : `${priorVia}, ${rawHeaders[i + 1]}`;
      continue;
    }
    if (host !== undefined && lower === 'host') continue;
    if (lower === 'x-forwarded-for') {
      priorFor = priorFor === undefined ? rawHeaders[i + 1] : `${priorFor}, ${rawHeaders[i + 1]}`;
      continue;
    }
    out.push(name, rawHeaders[i + 1]);
  }
  if (remote !== undefined) out.push('x-forwarded-for', priorFor === undefined ? remote : `${priorFor}, ${remote}`);
  else if (priorFor !== undefined) out.push('x-forwarded-for', priorFor);
  out.push('via', priorVia === undefined ? via : `${priorVia}, ${via}`);
  return out;
}

/**
 * The response fields to send to the client, from the sandbox's response head ([name, value, ...] as it sent them):
 * end-to-end fields plus the sandbox's Content-Length (`hasLength`), which frames the body to the client as it came
 * (without it the gateway frames the body chunked). Via is appended.
 */
export function forwardedResponseHeaders(rawHeaders: readonly string[], via: string): { fields: string[]; hasLength: boolean } {
  let connection: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === 10 && rawHeaders[i].toLowerCase() === 'connection') {
      connection = connection === undefined ? rawHeaders[i + 1] : `${connection},${rawHeaders[i + 1]}`;
    }
  }
  const extra = listedInConnection(connection);
  const out: string[] = [];
  let priorVia: string | undefined;
  let hasLength = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const lower = name.toLowerCase();
    if (lower === 'content-length') {
      hasLength = true;
      out.push(name, rawHeaders[i + 1]);
      continue;
    }
    if (ALWAYS_DROPPED.has(lower) || extra?.has(lower)) continue;
    if (lower === 'via') {
      priorVia = priorVia === undefined ? rawHeaders[i + 1] : `${priorVia}, ${rawHeaders[i + 1]}`;
      continue;
    }
    out.push(name, rawHeaders[i + 1]);
  }
  out.push('via', priorVia === undefined ? via : `${priorVia}, ${via}`);
  return { fields: out, hasLength };
}
