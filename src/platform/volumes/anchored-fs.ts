/**
 * File operations inside one volume's directory that never leave it. Sandboxes write the volume too, so any name in
 * it may be a symbolic link (to /etc, say) by the time the platform, as root, acts on it. Every lookup therefore goes
 * one component at a time from an open directory (`/proc/self/fd/<fd>/<name>`, the openat of a runtime without
 * one) and never follows a link: a directory on the way is opened with O_NOFOLLOW, the last name is acted on with
 * calls that do not follow it (lstat, unlink, rmdir, rename, mkdir) or opened with O_NOFOLLOW. A link is an entry
 * like any other: it is listed, stat'ed and removed, never followed. O_NONBLOCK keeps a FIFO from blocking an open.
 */
import * as fs from 'node:fs';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

/** Why an operation on a volume path failed, in terms the API answers with (404, 400, 409). */
export class VolumePathError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** A volume path's components: "/" and "" are the root, "." and empty components drop out, ".." is refused. */
export function pathComponents(path: string): string[] {
  if (path.includes('\0')) throw new VolumePathError(400, 'path: expected no NUL character');
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..'))
    throw new VolumePathError(400, `path ${JSON.stringify(path)}: ".." is not allowed; give the path from the volume's root`);
  return parts;
}

/** The path as the API shows it: from the volume's root, with a leading "/". */
export function shownPath(parts: string[]): string {
  return `/${parts.join('/')}`;
}

const at = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

function explain(err: unknown, shown: string): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new VolumePathError(404, `${shown} not found`);
  if (code === 'ENOTDIR' || code === 'ELOOP')
    return new VolumePathError(400, `${shown}: a component is not a directory (a file or a symbolic link, which is never followed)`);
  if (code === 'EEXIST') return new VolumePathError(409, `${shown} already exists`);
  if (code === 'EISDIR') return new VolumePathError(409, `${shown} is a directory`);
  if (code === 'ENOTEMPTY') return new VolumePathError(409, `${shown} is not empty`);
  return err as Error;
}

/** Runs `fn` with an open directory fd, closing it after. */
function withFd<T>(fd: number, fn: (fd: number) => T): T {
  try {
    return fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export interface Ownership {
  /** Host ids (already mapped). */
  uid: number;
  gid: number;
  mode: number;
}

/** The entries of one volume (its root directory on the host). Synchronous: each call is one short walk. */
export class AnchoredTree {
  constructor(readonly root: string) {}

  /** The fd of the directory `parts` names (the root for []), opened without following a link on the way. */
  openDir(parts: string[]): number {
    let fd = fs.openSync(this.root, DIR_FLAGS);
    for (const [i, part] of parts.entries()) {
      let next: number;
      try {
        next = fs.openSync(at(fd, part), DIR_FLAGS);
      } catch (err) {
        fs.closeSync(fd);
        throw explain(err, shownPath(parts.slice(0, i + 1)));
      }
      fs.closeSync(fd);
      fd = next;
    }
    return fd;
  }

  /** lstat of the entry (the root's stat for []). */
  lstat(parts: string[]): fs.Stats {
    if (parts.length === 0) return withFd(this.openDir([]), (fd) => fs.fstatSync(fd));
    return withFd(this.openDir(parts.slice(0, -1)), (dir) => {
      try {
        return fs.lstatSync(at(dir, parts.at(-1) as string));
      } catch (err) {
        throw explain(err, shownPath(parts));
      }
    });
  }

  readlink(parts: string[]): string | undefined {
    if (parts.length === 0) return undefined;
    return withFd(this.openDir(parts.slice(0, -1)), (dir) => {
      try {
        return fs.readlinkSync(at(dir, parts.at(-1) as string));
      } catch {
        return undefined;
      }
    });
  }

  /** Entries below the directory, `depth` levels deep (1: its own entries), links listed and not followed. */
  list(parts: string[], depth: number): Array<{ parts: string[]; stat: fs.Stats; target?: string }> {
    const out: Array<{ parts: string[]; stat: fs.Stats; target?: string }> = [];
    const walk = (fd: number, here: string[], level: number) => {
      for (const name of fs.readdirSync(`/proc/self/fd/${fd}`).sort()) {
        let stat: fs.Stats;
        try {
          stat = fs.lstatSync(at(fd, name));
        } catch {
          continue; // removed by a sandbox meanwhile
        }
        const target = stat.isSymbolicLink() ? readlinkOrUndefined(at(fd, name)) : undefined;
        out.push({ parts: [...here, name], stat, ...(target !== undefined ? { target } : {}) });
        if (stat.isDirectory() && level < depth) {
          let sub: number;
          try {
            sub = fs.openSync(at(fd, name), DIR_FLAGS);
          } catch {
            continue; // replaced by a link or removed meanwhile: not followed
          }
          withFd(sub, (s) => walk(s, [...here, name], level + 1));
        }
      }
    };
    withFd(this.openDir(parts), (fd) => walk(fd, parts, 1));
    return out;
  }

  /** Makes the directory (and, with `parents`, those above it), each given `own`; 409 when it exists without `parents`. */
  mkdir(parts: string[], own: Ownership, parents: boolean): void {
    if (parts.length === 0) {
      if (parents) return;
      throw new VolumePathError(409, '/ (the volume itself) already exists');
    }
    let fd = fs.openSync(this.root, DIR_FLAGS);
    try {
      for (const [i, part] of parts.entries()) {
        const last = i === parts.length - 1;
        const shown = shownPath(parts.slice(0, i + 1));
        let made = false;
        // Without `parents` only the last is made: a missing one above it is a 404.
        if (last || parents) {
          try {
            fs.mkdirSync(at(fd, part), { mode: 0o700 });
            made = true;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !parents) throw explain(err, shown);
          }
        }
        let next: number;
        try {
          next = fs.openSync(at(fd, part), DIR_FLAGS);
        } catch (err) {
          throw explain(err, shown);
        }
        if (made) {
          fs.fchownSync(next, own.uid, own.gid);
          fs.fchmodSync(next, own.mode);
        }
        fs.closeSync(fd);
        fd = next;
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Opens a new file for writing in the parent directory of `parts` under a temporary name; `commit` renames it over
   * the entry (never following a link there: a link is replaced), `abort` removes it.
   */
  createTemp(
    parts: string[],
    own: Ownership,
    tempName: string,
  ): { fd: number; commit(replaceLink: boolean): void; abort(): void; existing?: fs.Stats } {
    if (parts.length === 0) throw new VolumePathError(400, 'path: expected a file below the volume\'s root, e.g. "/notes.txt"');
    const name = parts.at(-1) as string;
    const dir = this.openDir(parts.slice(0, -1));
    let existing: fs.Stats | undefined;
    try {
      existing = fs.lstatSync(at(dir, name));
    } catch {
      existing = undefined;
    }
    if (existing?.isDirectory()) {
      fs.closeSync(dir);
      throw new VolumePathError(409, `${shownPath(parts)} is a directory`);
    }
    const fd = fs.openSync(at(dir, tempName), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    fs.fchownSync(fd, own.uid, own.gid);
    fs.fchmodSync(fd, own.mode);
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      fs.closeSync(dir);
    };
    return {
      fd,
      ...(existing ? { existing } : {}),
      commit: (replaceLink) => {
        try {
          if (!replaceLink) {
            const now = fs.lstatSync(at(dir, name), { throwIfNoEntry: false });
            if (now?.isSymbolicLink())
              throw new VolumePathError(409, `${shownPath(parts)} is a symbolic link: pass force to replace the link itself`);
          }
          fs.renameSync(at(dir, tempName), at(dir, name));
        } catch (err) {
          fs.rmSync(at(dir, tempName), { force: true });
          throw err instanceof VolumePathError ? err : explain(err, shownPath(parts));
        } finally {
          close();
        }
      },
      abort: () => {
        try {
          fs.rmSync(at(dir, tempName), { force: true });
        } finally {
          close();
        }
      },
    };
  }

  /** Opens a regular file for reading; 400 for anything else (a directory, a link, a FIFO). */
  openFile(parts: string[]): { fd: number; size: number } {
    if (parts.length === 0) throw new VolumePathError(400, "/ is the volume's root directory, not a file");
    return withFd(this.openDir(parts.slice(0, -1)), (dir) => {
      let fd: number;
      try {
        fd = fs.openSync(at(dir, parts.at(-1) as string), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      } catch (err) {
        throw explain(err, shownPath(parts));
      }
      const stat = fs.fstatSync(fd);
      if (!stat.isFile()) {
        fs.closeSync(fd);
        throw new VolumePathError(400, `${shownPath(parts)} is not a regular file`);
      }
      return { fd, size: stat.size };
    });
  }

  /** Sets owner and mode of the entry (not of a link: 400). */
  setMetadata(parts: string[], change: { uid?: number; gid?: number; mode?: number }): void {
    const dir = this.openDir(parts.slice(0, -1));
    withFd(dir, (d) => {
      let fd: number;
      try {
        fd =
          parts.length === 0
            ? fs.openSync(this.root, DIR_FLAGS)
            : fs.openSync(at(d, parts.at(-1) as string), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      } catch (err) {
        throw explain(err, shownPath(parts));
      }
      withFd(fd, (f) => {
        if (change.uid !== undefined || change.gid !== undefined) {
          const stat = fs.fstatSync(f);
          fs.fchownSync(f, change.uid ?? stat.uid, change.gid ?? stat.gid);
        }
        if (change.mode !== undefined) fs.fchmodSync(f, change.mode);
      });
    });
  }

  /** Removes the entry; a directory with everything in it, each level opened without following a link. */
  remove(parts: string[]): void {
    if (parts.length === 0) throw new VolumePathError(400, "the volume's root cannot be removed (destroy the volume instead)");
    withFd(this.openDir(parts.slice(0, -1)), (dir) => {
      const name = parts.at(-1) as string;
      let stat: fs.Stats;
      try {
        stat = fs.lstatSync(at(dir, name));
      } catch (err) {
        throw explain(err, shownPath(parts));
      }
      if (stat.isDirectory()) removeTree(dir, name);
      else fs.unlinkSync(at(dir, name));
    });
  }
}

function readlinkOrUndefined(path: string): string | undefined {
  try {
    return fs.readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** Empties and removes directory `name` of the open directory `dir`; a link met on the way is unlinked, not followed. */
function removeTree(dir: number, name: string): void {
  let fd: number;
  try {
    fd = fs.openSync(at(dir, name), DIR_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    // Replaced by a link or a file since it was listed: that is removed as itself.
    fs.rmSync(at(dir, name), { force: true });
    return;
  }
  withFd(fd, (d) => {
    for (const entry of fs.readdirSync(`/proc/self/fd/${d}`, { withFileTypes: true })) {
      if (entry.isDirectory()) removeTree(d, entry.name);
      else fs.rmSync(at(d, entry.name), { force: true });
    }
  });
  fs.rmdirSync(at(dir, name));
}
