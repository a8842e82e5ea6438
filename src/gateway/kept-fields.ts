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
import { type RequestHeadScan, scanRequestLine } from './head-scanner';

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
    /** Where the scan listed the Content-Length field (RequestHeadScan.fields.lengthAt); -1 without one. */
    private readonly lengthAt: number,
    /** The head's Connection did not say close. */
    private readonly keepAlive: boolean,
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
      l,
      scan.keepAlive,
    );
  }

  /**
   * Reads a head at the start of `buf` that repeats this entry: a request line as the scanner reads it
   * (scanRequestLine), then exactly this entry's field bytes, but for 1 to 15 digits of Content-Length in place of
   * its own, all within `maxBytes`. Such a head is one scanRequestHead accepts and reads the same way, so `scan` is
   * filled with what the caller reads of it (method, target, end, keep-alive, where the digits lie). false: it is
   * not a repeat, and nothing is concluded from the bytes.
   */
  readRepeat(buf: Buffer, maxBytes: number, scan: RequestHeadScan): boolean {
    const stop = Math.min(buf.length, maxBytes);
    const start = scanRequestLine(buf, 0, stop, scan);
    if (start === -1) return false;
    const bytes = this.bytes;
    let end: number;
    if (this.digitsStart === -1) {
      end = start + bytes.length;
      if (end > stop || buf.compare(bytes, 0, bytes.length, start, end) !== 0) return false;
    } else {
      const digitsStart = start + this.digitsStart;
      if (digitsStart > stop || buf.compare(bytes, 0, this.digitsStart, start, digitsStart) !== 0) return false;
      let i = digitsStart;
      while (i < stop && i - digitsStart <= 15 && buf[i] >= 0x30 && buf[i] <= 0x39) i++;
      if (i === digitsStart || i - digitsStart > 15) return false;
      end = i + bytes.length - this.digitsEnd;
      if (end > stop || buf.compare(bytes, this.digitsEnd, bytes.length, i, end) !== 0) return false;
      const at = scan.fields.at;
      at[this.lengthAt + 2] = digitsStart;
      at[this.lengthAt + 3] = i;
    }
    scan.fieldsStart = start;
    scan.end = end;
    scan.keepAlive = this.keepAlive;
    scan.fields.lengthAt = this.lengthAt;
    return true;
  }

  /** The [name, value, ...] list of a head repeating this entry whose Content-Length digits are `digits`. */
  rawHeadersWith(digits: string): readonly string[] {
    const index = this.lengthIndex();
    if (index === -1 || this.rawHeaders[index] === digits) return this.rawHeaders;
    const out = this.rawHeaders.slice();
    out[index] = digits;
    return out;
  }

  /** The field map of a head repeating this entry whose Content-Length digits are `digits`. */
  headersWith(digits: string): Readonly<IncomingHttpHeaders> {
    if (this.lengthAt === -1 || this.headers['content-length'] === digits) return this.headers;
    return { ...this.headers, 'content-length': digits };
  }

  /** The index of the Content-Length value in rawHeaders (the scan lists 5 numbers per field); -1 without one. */
  private lengthIndex(): number {
    return this.lengthAt === -1 ? -1 : (this.lengthAt / 5) * 2 + 1;
  }
}
