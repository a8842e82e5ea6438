/**
 * What a COPY upload may hold, entry by entry (docs/security.md, Template builds): regular files, directories,
 * symlinks and hard links, each at a relative path that stays inside the upload. Refused: absolute names, names that
 * climb out with `..`, an entry under one of the upload's files, a hard link to anything but a file earlier in the
 * upload, devices, FIFOs and every other type, and a path given twice. An entry under one of the upload's symlinks
 * is never unpacked (`skip`): the SDK lists what a symlinked directory holds (glob follows one link), and the link
 * itself is kept, so it is written through nothing. A symlink's target is kept as it is: it is resolved only inside
 * the template's root, in the build step's container. Pure: each entry is checked against what came before it.
 */
import type { TarEntry } from './tar-reader';

/** At most this many entries in one upload. */
export const MAX_UPLOAD_ENTRIES = 200_000;
/** At most this many bytes of file data in one upload, unpacked (a gzip of zeros is small). */
export const MAX_UNPACKED_BYTES = 8 * 1024 ** 3;

export class UploadRefused extends Error {}

/** A checked entry: `path` relative, `/`-separated, without `.` or empty components ('' is the upload's root). */
export interface CheckedEntry {
  kind: 'file' | 'directory' | 'symlink' | 'hardlink';
  path: string;
  /** symlink: the target as given; hard link: the checked path of the file it links to. */
  target: string;
  mode: number;
  size: number;
  mtime: number;
  /** Under one of the upload's symlinks: counted in its files hash, never unpacked. */
  skip?: true;
}

/** A member name as a relative path inside the upload, or why it is refused. */
export function normalizeMemberName(name: string): { ok: true; path: string } | { ok: false; why: string } {
  if (name.includes('\0')) return { ok: false, why: 'has a NUL byte in its name' };
  if (name.startsWith('/')) return { ok: false, why: 'is an absolute path; uploads hold relative paths only' };
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return { ok: false, why: 'climbs out of the upload with ..' };
  return { ok: true, path: parts.join('/') };
}

function show(name: string): string {
  return JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}...` : name);
}

export class UploadRules {
  private readonly kinds = new Map<string, CheckedEntry['kind']>();
  private entries = 0;
  private bytes = 0;

  /** The entry, checked; throws UploadRefused naming the entry and the rule. */
  check(e: TarEntry): CheckedEntry {
    const refuse = (why: string): never => {
      throw new UploadRefused(`archive entry ${show(e.name)} ${why}`);
    };
    this.entries += 1;
    if (this.entries > MAX_UPLOAD_ENTRIES) refuse(`is one entry more than the ${MAX_UPLOAD_ENTRIES} an upload may hold`);
    if (e.kind !== 'file' && e.kind !== 'directory' && e.kind !== 'symlink' && e.kind !== 'hardlink')
      refuse(
        `is a ${e.kind === 'other' ? `member of type ${JSON.stringify(e.typeflag)}` : e.kind}; uploads hold files, directories and links only`,
      );
    const kind = e.kind as CheckedEntry['kind'];
    const n = normalizeMemberName(e.name);
    if (!n.ok) return refuse(n.why);
    const path = n.path;
    if (kind !== 'file' && e.size > 0) refuse(`is a ${kind} with ${e.size} bytes of data`);
    if (path === '') {
      if (kind !== 'directory') refuse('names the upload itself but is not a directory');
      return { kind, path, target: '', mode: e.mode, size: 0, mtime: e.mtime };
    }
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const above = parts.slice(0, i).join('/');
      const k = this.kinds.get(above);
      if (k === 'symlink') return { kind, path, target: e.linkname, mode: e.mode, size: e.size, mtime: e.mtime, skip: true };
      if (k === 'file' || k === 'hardlink') refuse(`is under ${show(above)}, which is a file`);
    }
    // Directories an entry implies are directories from now on: no later entry may replace them.
    for (let i = 1; i < parts.length; i++)
      if (!this.kinds.has(parts.slice(0, i).join('/'))) this.kinds.set(parts.slice(0, i).join('/'), 'directory');
    const before = this.kinds.get(path);
    if (before !== undefined && !(before === 'directory' && kind === 'directory'))
      refuse(`appears twice in the upload (a ${before} before)`);
    let target = '';
    if (kind === 'symlink') {
      if (e.linkname === '' || e.linkname.includes('\0')) refuse('is a symlink without a usable target');
      target = e.linkname;
    }
    if (kind === 'hardlink') {
      const t = normalizeMemberName(e.linkname);
      if (!t.ok || t.path === '') return refuse(`is a hard link to ${show(e.linkname)}, outside the upload`);
      const k = this.kinds.get(t.path);
      if (k !== 'file' && k !== 'hardlink') refuse(`is a hard link to ${show(e.linkname)}, which is not a file earlier in the upload`);
      target = t.path;
    }
    if (kind === 'file') {
      this.bytes += e.size;
      if (this.bytes > MAX_UNPACKED_BYTES) refuse(`takes the upload past ${MAX_UNPACKED_BYTES} bytes unpacked`);
    }
    this.kinds.set(path, kind);
    return { kind, path, target, mode: e.mode, size: e.size, mtime: e.mtime };
  }
}
