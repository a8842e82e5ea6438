/**
 * Disk images formatted ahead of need, so a create or a build step takes a ready one instead of waiting for
 * mkfs.ext4 (sandbox-disk.ts). One pool per data directory and process (poolOf), in `<dir>/.disk-pool`: for each of
 * the last SIZES sizes asked for, up to DEPTH images, formatted one at a time in the background at the lowest CPU
 * priority after each take. An image is `<sizeMB>-<random>.tmp` while it is formatted and `.img` once it is; a take
 * claims one by renaming it (atomic: two takers never get the same image), then links it into place without
 * replacing anything. Every image is formatted on its own, so each has its own file-system UUID.
 *
 * Pooled images are not counted by disk admission: they are sparse and unwritten, about 0.6 MB of the host's disk
 * each. A disk that is done with is discarded through the pool too: renamed into its directory and unlinked in the
 * background, so a step or a kill does not wait while the host's file system frees the blocks the disk had written.
 * closePool (with releaseDataDir, at the platform's close) stops the pool and removes them; a data directory
 * kept over a restart keeps them for the next run.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execOk } from '../util/exec';

export const POOL_DIR = '.disk-pool';
/** Images kept ready per size. */
export const DEPTH = 2;
/** How many of the most recently asked sizes are kept ready. */
export const SIZES = 2;

const MIB = 1024 * 1024;

/** mke2fs arguments: no discard pass, inode tables and journal zeroed lazily, 1% reserved for host root. */
export function mkfsArgv(image: string): string[] {
  return ['mkfs.ext4', '-q', '-F', '-m', '1', '-E', 'lazy_itable_init=1,lazy_journal_init=1,nodiscard', image];
}

/** Makes `image` (a new sparse file of `sizeMB`) and formats it; removes it when that fails. */
export async function formatImage(image: string, sizeMB: number, nice = false): Promise<void> {
  const fd = fs.openSync(image, 'wx', 0o600);
  try {
    fs.ftruncateSync(fd, sizeMB * MIB);
  } finally {
    fs.closeSync(fd);
  }
  try {
    await execOk([...(nice ? ['nice', '-n', '19'] : []), ...mkfsArgv(image)], { timeoutMs: 60_000 });
  } catch (err) {
    fs.rmSync(image, { force: true });
    throw err;
  }
}

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}

export class DiskPool {
  readonly poolDir: string;
  /** Sizes to keep ready, the most recently asked first. */
  private readonly wanted: number[] = [];
  private filling: Promise<void> | undefined;
  private closed = false;
  /** Images being unlinked (discard). */
  private readonly discarding = new Set<Promise<void>>();

  constructor(readonly dataDir: string) {
    this.poolDir = path.join(dataDir, POOL_DIR);
  }

  private ready(sizeMB: number): string[] {
    try {
      return fs.readdirSync(this.poolDir).filter((f) => f.startsWith(`${sizeMB}-`) && f.endsWith('.img'));
    } catch {
      return [];
    }
  }

  /** Puts a formatted image of `sizeMB` at `image` (which must not exist) when one is ready; false when none is. */
  take(image: string, sizeMB: number): boolean {
    for (const name of this.ready(sizeMB)) {
      const claimed = path.join(this.poolDir, `${sizeMB}-${randomBytes(6).toString('hex')}.claimed`);
      try {
        fs.renameSync(path.join(this.poolDir, name), claimed);
      } catch (err) {
        if (isCode(err, 'ENOENT')) continue; // taken by another taker meanwhile
        throw err;
      }
      try {
        fs.linkSync(claimed, image);
      } finally {
        fs.rmSync(claimed, { force: true });
      }
      return true;
    }
    return false;
  }

  /** Keeps images of `sizeMB` ready from now on; formats what is missing in the background. */
  want(sizeMB: number): void {
    if (this.closed) return;
    const at = this.wanted.indexOf(sizeMB);
    if (at >= 0) this.wanted.splice(at, 1);
    this.wanted.unshift(sizeMB);
    this.wanted.length = Math.min(this.wanted.length, SIZES);
    this.filling ??= this.fill().finally(() => (this.filling = undefined));
  }

  private async fill(): Promise<void> {
    for (;;) {
      const size = this.wanted.find((s) => this.ready(s).length < DEPTH);
      if (this.closed || size === undefined) return;
      try {
        this.makeDir();
      } catch {
        return;
      }
      const tmp = path.join(this.poolDir, `${size}-${randomBytes(6).toString('hex')}.tmp`);
      try {
        await formatImage(tmp, size, true);
        fs.renameSync(tmp, tmp.replace(/\.tmp$/, '.img'));
      } catch {
        fs.rmSync(tmp, { force: true });
        return; // tried again at the next take
      }
    }
  }

  /**
   * Removes `image` (an unmounted disk image) without waiting for its blocks to be freed: renamed into the pool's
   * directory at once (so it is no longer any sandbox's or step's), unlinked in the background.
   */
  discard(image: string): void {
    const target = path.join(this.poolDir, `discard-${randomBytes(6).toString('hex')}`);
    try {
      this.makeDir();
      fs.renameSync(image, target);
    } catch (err) {
      if (isCode(err, 'ENOENT') && !fs.existsSync(image)) return;
      fs.rmSync(image, { force: true });
      return;
    }
    const gone: Promise<void> = fs.promises
      .rm(target, { force: true })
      .catch(() => undefined)
      .finally(() => this.discarding.delete(gone));
    this.discarding.add(gone);
  }

  /** The pool's directory (never with its parents: a data directory removed meanwhile stays removed). */
  private makeDir(): void {
    try {
      fs.mkdirSync(this.poolDir, { mode: 0o700 });
    } catch (err) {
      if (!isCode(err, 'EEXIST')) throw err;
    }
  }

  /** Resolves when no image is being formatted or unlinked. */
  async idle(): Promise<void> {
    await this.filling;
    await Promise.all(this.discarding);
  }

  /** Stops formatting (waits for the one under way) and removes the pool's images. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
    fs.rmSync(this.poolDir, { recursive: true, force: true });
  }
}

/** The one pool of each data directory in this process, by absolute path. */
const pools = new Map<string, DiskPool>();

/** The pool of `dataDir` (made on first use). */
export function poolOf(dataDir: string): DiskPool {
  const key = path.resolve(dataDir);
  const pool = pools.get(key) ?? new DiskPool(key);
  pools.set(key, pool);
  return pool;
}

/** Closes the pool of `dataDir` (its images removed); the next poolOf makes a new one. */
export async function closePool(dataDir: string): Promise<void> {
  const key = path.resolve(dataDir);
  const pool = pools.get(key);
  pools.delete(key);
  await (pool ?? new DiskPool(key)).close();
}
