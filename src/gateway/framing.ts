import type { IncomingHttpHeaders } from 'node:http';

/**
 * How a request's body is delimited, decided once from what Node's HTTP parser accepted. The gateway sends the
 * sandbox exactly this framing and nothing else, whatever the method: a body is always announced (Content-Length
 * or chunked), a request without one never carries bytes after its head.
 */
export type RequestFraming =
  | { kind: 'none' }
  | { kind: 'length'; length: number }
  | { kind: 'chunked' }
  | { kind: 'refused'; message: string };

const LENGTH_TEXT = /^[0-9]{1,15}$/;

/**
 * Node's parser (strict mode) already refuses Content-Length together with Transfer-Encoding, repeated or
 * conflicting Content-Length, and a Transfer-Encoding whose last coding is not chunked. These checks repeat the
 * rules the forwarding depends on, so a parser change or a lenient flag can never turn into a framing hole.
 */
export function requestFraming(headers: IncomingHttpHeaders): RequestFraming {
  const te = headers['transfer-encoding'];
  const cl = headers['content-length'];
  if (te !== undefined && cl !== undefined) {
    return { kind: 'refused', message: 'a request may not carry both Content-Length and Transfer-Encoding' };
  }
  if (te !== undefined) {
    if (te.trim().toLowerCase() !== 'chunked') {
      return {
        kind: 'refused',
        message: `Transfer-Encoding ${JSON.stringify(te)} is not accepted: the gateway forwards request bodies framed "chunked" or by Content-Length only`,
      };
    }
    return { kind: 'chunked' };
  }
  if (cl !== undefined) {
    if (!LENGTH_TEXT.test(cl)) return { kind: 'refused', message: `Content-Length ${JSON.stringify(cl)} is not one decimal number` };
    const length = Number(cl);
    return length === 0 ? { kind: 'none' } : { kind: 'length', length };
  }
  return { kind: 'none' };
}
