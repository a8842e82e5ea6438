/**
 * A tar reader for COPY uploads: bytes in, events out (an entry's header, its data, its end). It is the only reader
 * of an upload in the kit: the checks of docs/security.md (upload-rules.ts), the files hash (files-hash.ts) and the
 * extraction (files.ts) all see the entries it reports, so no second parser can read the same bytes differently.
 *
 * It reads ustar, GNU tar's long names (`L`, `K`) and pax extended headers (`path`, `linkpath`, `size`; a global
 * header is read and ignored); every other entry type is reported as it is, for the rules to refuse. Pure: no I/O.
 */

export const BLOCK = 512;
/** A pax header or GNU long name larger than this is refused (a path is at most 4096 bytes on Linux). */
export const MAX_META_BYTES = 64 * 1024;

export type EntryKind = 'file' | 'directory' | 'symlink' | 'hardlink' | 'character device' | 'block device' | 'fifo' | 'other';

export interface TarEntry {
  kind: EntryKind;
  /** The header's type flag, as read ('0', '5', ...). */
  typeflag: string;
  /** The member name after long-name and pax records. */
  name: string;
  /** A link's target (symlink) or the member it links to (hard link). */
  linkname: string;
  /** Permission bits with setuid, setgid and sticky (mode & 0o7777). */
  mode: number;
  /** Bytes of data that follow the header. */
  size: number;
  /** Modification time, seconds since the epoch. */
  mtime: number;
}

export type TarEvent = { type: 'entry'; entry: TarEntry } | { type: 'data'; chunk: Buffer } | { type: 'end-entry' };

export class TarFormatError extends Error {}

const KINDS: Record<string, EntryKind> = {
  '0': 'file',
  '\0': 'file',
  '7': 'file',
  '1': 'hardlink',
  '2': 'symlink',
  '3': 'character device',
  '4': 'block device',
  '5': 'directory',
  '6': 'fifo',
};

function text(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const nul = field.indexOf(0);
  return (nul < 0 ? field : field.subarray(0, nul)).toString('utf8');
}

/** An octal number field, or GNU's base-256 form (first byte's high bit set). */
export function numberField(block: Buffer, start: number, length: number): number {
  const field = block.subarray(start, start + length);
  if ((field[0]! & 0x80) !== 0) {
    if ((field[0]! & 0x40) !== 0) throw new TarFormatError('a negative number in a tar header');
    let value = field[0]! & 0x3f;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    if (!Number.isSafeInteger(value)) throw new TarFormatError('a number too large in a tar header');
    return value;
  }
  const digits = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^[ ]+/, '');
  if (digits === '') return 0;
  if (!/^[0-7]+$/.test(digits)) throw new TarFormatError(`a malformed number ${JSON.stringify(digits)} in a tar header`);
  return Number.parseInt(digits, 8);
}

function checksumOk(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return numberField(block, 148, 8) === sum;
}

export interface RawHeader {
  typeflag: string;
  name: string;
  linkname: string;
  mode: number;
  size: number;
  mtime: number;
}

/** One 512-byte header: undefined for an all-zero block (the end of the archive). */
export function parseHeader(block: Buffer): RawHeader | undefined {
  if (block.length !== BLOCK) throw new TarFormatError('a tar header must be 512 bytes');
  if (block.every((b) => b === 0)) return undefined;
  if (!checksumOk(block)) throw new TarFormatError('a tar header checksum does not match (not a tar archive, or a damaged one)');
  const magic = block.subarray(257, 263).toString('latin1');
  const name = text(block, 0, 100);
  // POSIX ustar splits long names into prefix/name; GNU's format uses that space for other fields.
  const prefix = magic === 'ustar\0' ? text(block, 345, 155) : '';
  return {
    typeflag: String.fromCharCode(block[156]!),
    name: prefix ? `${prefix}/${name}` : name,
    linkname: text(block, 157, 100),
    mode: numberField(block, 100, 8) & 0o7777,
    size: numberField(block, 124, 12),
    mtime: numberField(block, 136, 12),
  };
}

/** The records of a pax extended header: `<length> <key>=<value>\n`, each. */
export function parsePax(body: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(body.subarray(at, space).toString('latin1'));
    if (!Number.isInteger(length) || length <= space - at || at + length > body.length)
      throw new TarFormatError('a malformed pax extended header');
    const record = body.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq < 0) throw new TarFormatError('a malformed pax extended header record');
    records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

type State =
  | { kind: 'header' }
  | { kind: 'data'; left: number; pad: number }
  | { kind: 'meta'; typeflag: string; left: number; pad: number; parts: Buffer[] }
  | { kind: 'done' };

/** Push bytes in with `write`, then call `end`; each answers the events the bytes completed, in order. */
export class TarReader {
  private pending: Buffer = Buffer.alloc(0);
  private state: State = { kind: 'header' };
  /** Overrides for the next entry (pax `x`, GNU `L` / `K`). */
  private next: { name?: string; linkname?: string; size?: number } = {};

  write(chunk: Buffer): TarEvent[] {
    const events: TarEvent[] = [];
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (buf.length > 0) {
      const s = this.state;
      if (s.kind === 'done') return events;
      if (s.kind === 'header') {
        if (buf.length < BLOCK) break;
        this.header(buf.subarray(0, BLOCK), events);
        buf = buf.subarray(BLOCK);
        continue;
      }
      if (s.left > 0) {
        const take = Math.min(s.left, buf.length);
        const piece = buf.subarray(0, take);
        if (s.kind === 'data') events.push({ type: 'data', chunk: piece });
        else s.parts.push(Buffer.from(piece));
        s.left -= take;
        buf = buf.subarray(take);
        if (s.left > 0) continue;
      }
      if (buf.length < s.pad) {
        s.pad -= buf.length;
        buf = buf.subarray(buf.length);
        break;
      }
      buf = buf.subarray(s.pad);
      s.pad = 0;
      if (s.kind === 'data') events.push({ type: 'end-entry' });
      else this.meta(s.typeflag, Buffer.concat(s.parts));
      this.state = { kind: 'header' };
    }
    if (buf.length > 0) this.pending = Buffer.from(buf);
    return events;
  }

  /** The input ended: an archive may stop after a complete entry (end blocks missing), never inside one. */
  end(): TarEvent[] {
    const s = this.state;
    if (s.kind === 'done') return [];
    if (s.kind === 'header' && this.pending.length === 0 && Object.keys(this.next).length === 0) return [];
    throw new TarFormatError('the archive ends in the middle of an entry');
  }

  private header(block: Buffer, events: TarEvent[]): void {
    const h = parseHeader(block);
    if (!h) {
      this.state = { kind: 'done' };
      return;
    }
    const size = this.next.size ?? h.size;
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (h.typeflag === 'x' || h.typeflag === 'g' || h.typeflag === 'L' || h.typeflag === 'K') {
      if (h.size > MAX_META_BYTES) throw new TarFormatError(`a tar metadata record of ${h.size} bytes (at most ${MAX_META_BYTES})`);
      this.state = { kind: 'meta', typeflag: h.typeflag, left: h.size, pad: (BLOCK - (h.size % BLOCK)) % BLOCK, parts: [] };
      if (h.size === 0) this.meta(h.typeflag, Buffer.alloc(0));
      return;
    }
    const entry: TarEntry = {
      kind: KINDS[h.typeflag] ?? 'other',
      typeflag: h.typeflag,
      name: this.next.name ?? h.name,
      linkname: this.next.linkname ?? h.linkname,
      mode: h.mode,
      size,
      mtime: h.mtime,
    };
    this.next = {};
    events.push({ type: 'entry', entry });
    if (size === 0) {
      events.push({ type: 'end-entry' });
      return;
    }
    this.state = { kind: 'data', left: size, pad };
  }

  private meta(typeflag: string, body: Buffer): void {
    this.state = { kind: 'header' };
    if (typeflag === 'L') this.next.name = text(body, 0, body.length);
    else if (typeflag === 'K') this.next.linkname = text(body, 0, body.length);
    else if (typeflag === 'x') {
      const pax = parsePax(body);
      const path = pax.get('path');
      const linkpath = pax.get('linkpath');
      const size = pax.get('size');
      if (path !== undefined) this.next.name = path;
      if (linkpath !== undefined) this.next.linkname = linkpath;
      if (size !== undefined) {
        if (!/^\d+$/.test(size) || !Number.isSafeInteger(Number(size))) throw new TarFormatError('a malformed pax size');
        this.next.size = Number(size);
      }
    }
  }
}
