/**
 * The name a client asks for in the first bytes it sends: the server name (SNI) of a TLS ClientHello, or the Host of
 * an HTTP/1 request. Pure: it is called with everything received so far and says whether it needs more.
 */

import { MAX_HEAD_BYTES, parseRequestHead } from './http-requests';

/** How much the relay waits for before it gives up on finding a name. */
export const MAX_FIRST_BYTES = MAX_HEAD_BYTES;

export type FirstBytes = { complete: false } | { complete: true; name: string | undefined; protocol: 'tls' | 'http' | 'other' };

const NEED_MORE: FirstBytes = { complete: false };

/** The SNI host name of a ClientHello that starts `buf` (one TLS record), or undefined when it names none. */
function sniOf(buf: Buffer): FirstBytes {
  if (buf.length < 5) return NEED_MORE;
  const recordEnd = 5 + buf.readUInt16BE(3);
  if (buf.length < recordEnd) return buf.length >= MAX_FIRST_BYTES ? { complete: true, name: undefined, protocol: 'tls' } : NEED_MORE;
  const none: FirstBytes = { complete: true, name: undefined, protocol: 'tls' };
  let p = 5;
  if (buf[p] !== 1) return none; // not a ClientHello
  const helloEnd = Math.min(recordEnd, p + 4 + buf.readUIntBE(p + 1, 3));
  p += 4 + 2 + 32; // type, length, client version, random
  const need = (n: number) => p + n <= helloEnd;
  if (!need(1)) return none;
  p += 1 + buf[p]!; // session id
  if (!need(2)) return none;
  p += 2 + buf.readUInt16BE(p); // cipher suites
  if (!need(1)) return none;
  p += 1 + buf[p]!; // compression methods
  if (!need(2)) return none;
  const extensionsEnd = Math.min(helloEnd, p + 2 + buf.readUInt16BE(p));
  p += 2;
  while (p + 4 <= extensionsEnd) {
    const type = buf.readUInt16BE(p);
    const length = buf.readUInt16BE(p + 2);
    const body = p + 4;
    if (body + length > extensionsEnd) return none;
    if (type === 0) {
      // server_name: list length, then entries of (type, length, name); type 0 is a host name.
      let q = body + 2;
      while (q + 3 <= body + length) {
        const nameType = buf[q]!;
        const nameLength = buf.readUInt16BE(q + 1);
        if (q + 3 + nameLength > body + length) return none;
        if (nameType === 0) return { complete: true, name: buf.toString('latin1', q + 3, q + 3 + nameLength), protocol: 'tls' };
        q += 3 + nameLength;
      }
      return none;
    }
    p = body + length;
  }
  return none;
}

/**
 * The host of an HTTP/1 request that starts `buf` (without a port), as a strict server reads its head
 * (http-requests.ts); undefined when it names none, or names it in a way servers could read otherwise.
 */
function hostOf(buf: Buffer): FirstBytes {
  const end = buf.indexOf('\r\n\r\n', 0, 'latin1');
  if (end < 0 || end + 4 > MAX_FIRST_BYTES)
    return buf.length >= MAX_FIRST_BYTES ? { complete: true, name: undefined, protocol: 'http' } : NEED_MORE;
  const head = parseRequestHead(buf.toString('latin1', 0, end));
  return { complete: true, name: typeof head === 'string' ? undefined : (head.host ?? undefined), protocol: 'http' };
}

/** What `buf` (everything the client sent so far) names. */
export function nameInFirstBytes(buf: Buffer): FirstBytes {
  if (buf.length === 0) return NEED_MORE;
  if (buf[0] === 0x16) return sniOf(buf);
  const head = buf.toString('latin1', 0, Math.min(buf.length, 8));
  if (/^[A-Z]{1,7} /.test(head)) return hostOf(buf);
  if (/^[A-Z]{1,7}$/.test(head)) return NEED_MORE;
  return { complete: true, name: undefined, protocol: 'other' };
}
