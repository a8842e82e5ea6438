/** Writes tar archives entry by entry (ustar headers), for tests that need entries no well-behaved tool makes. */
import { gzipSync } from 'node:zlib';

export interface RawEntry {
  name: string;
  /** '0' file, '1' hard link, '2' symlink, '3' char device, '5' directory, '6' fifo, ... */
  type?: string;
  data?: string | Buffer;
  linkname?: string;
  mode?: number;
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

export function header(e: RawEntry, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(e.name, 0, 100, 'utf8');
  h.write(octal(e.mode ?? 0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(1_700_000_000, 12), 136, 'latin1');
  h.write(e.type ?? '0', 156, 'latin1');
  h.write(e.linkname ?? '', 157, 100, 'utf8');
  h.write('ustar\u000000', 257, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

/** A tar of the entries (with the two zero blocks at the end); gzip it with `gzip: true`. */
export function makeTar(entries: RawEntry[], gzip = false): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    parts.push(header(e, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  const tar = Buffer.concat(parts);
  return gzip ? gzipSync(tar) : tar;
}
