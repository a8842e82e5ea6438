/**
 * The field lines of a client connection's last request head read by the fast path (head-scanner.ts), kept so that
 * a head repeating them is read without a string per field. A client sends the same fields call after call on a
 * kept-alive connection (its token, the sandbox's ID, its content type and user agent), and often only the digits of
 * Content-Length differ. A head whose field bytes equal the kept ones, those digits aside, gets the kept
 * [name, value, ...] list and field map, with its own Content-Length put in; what forward.ts derives from them (the
 * fields sent upstream) is kept on the entry too.
 *
 * Equal bytes read the same, so nothing is decided on the strength of an entry that the bytes would not decide:
 * routing, the token check and the framing still run on every request. An entry never changes once made (a
 * pipelined request keeps the entry its head was read with while a later head replaces the connection's), its list
 * and map are frozen, and a connection's entry is only compared with heads of that same connection.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHeadScan } from './head-scanner';

/** What forward.ts derived from an entry's fields, with what it derived them for. */
export interface UpstreamFields {
  via: string;
  remote: string | undefined;
  dropped: ReadonlySet<string>;
  host: string | undefined;
  /** [name, value, ...] to send upstream. */
  list: readonly string[];
  /** The same as the bytes of their field lines (`name: value` CRLF each). */
  lines: Buffer;
}

export class KeptFields {
  /** Set once by forward.ts, for the target the entry's first forwarded request had. */
  upstream: UpstreamFields | undefined;

  private constructor(
    /** A copy of the head's field lines, CRLFs and the blank line that ends the head included. */
    private readonly bytes: Buffer,
    /** Where the Content-Length digits lie in `bytes`, [start, end); -1 when the head had none. */
    private readonly digitsStart: number,
    private readonly digitsEnd: number,
    readonly rawHeaders: readonly string[],
    readonly headers: Readonly<IncomingHttpHeaders>,
    /** The index of the Content-Length value in rawHeaders; -1 without one. */
    private readonly lengthIndex: number,
  ) {}

  /** The entry of the head scanned into `scan` from `buf`, read as `rawHeaders` and `headers` (both frozen here). */
  static of(buf: Buffer, scan: RequestHeadScan, rawHeaders: string[], headers: IncomingHttpHeaders): KeptFields {
    const start = scan.fieldsStart;
    const at = scan.fields.at;
    const l = scan.fields.lengthAt;
    return new KeptFields(
      Buffer.from(buf.subarray(start, scan.end)),
      l === -1 ? -1 : at[l + 2] - start,
      l === -1 ? -1 : at[l + 3] - start,
      Object.freeze(rawHeaders),
      Object.freeze(headers),
      l === -1 ? -1 : (l / 5) * 2 + 1,
    );
  }

  /** Whether the head scanned into `scan` from `buf` has this entry's field bytes, Content-Length's digits aside. */
  repeatedIn(buf: Buffer, scan: RequestHeadScan): boolean {
    const start = scan.fieldsStart;
    const end = scan.end;
    const bytes = this.bytes;
    const l = scan.fields.lengthAt;
    if (l === -1) return this.digitsStart === -1 && end - start === bytes.length && buf.compare(bytes, 0, bytes.length, start, end) === 0;
    if (this.digitsStart === -1) return false;
    const at = scan.fields.at;
    const digitsStart = at[l + 2];
    const digitsEnd = at[l + 3];
    // The same bytes before the digits and after them, each the same length.
    return (
      digitsStart - start === this.digitsStart &&
      end - digitsEnd === bytes.length - this.digitsEnd &&
      buf.compare(bytes, 0, this.digitsStart, start, digitsStart) === 0 &&
      buf.compare(bytes, this.digitsEnd, bytes.length, digitsEnd, end) === 0
    );
  }

  /** The [name, value, ...] list of a head repeating this entry whose Content-Length digits are `digits`. */
  rawHeadersWith(digits: string): readonly string[] {
    if (this.lengthIndex === -1 || this.rawHeaders[this.lengthIndex] === digits) return this.rawHeaders;
    const out = this.rawHeaders.slice();
    out[this.lengthIndex] = digits;
    return out;
  }

  /** The field map of a head repeating this entry whose Content-Length digits are `digits`. */
  headersWith(digits: string): Readonly<IncomingHttpHeaders> {
    if (this.lengthIndex === -1 || this.headers['content-length'] === digits) return this.headers;
    return { ...this.headers, 'content-length': digits };
  }
}
