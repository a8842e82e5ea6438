/**
 * COPY uploads: stored once per files hash, checked entry by entry when they arrive (upload-rules.ts: a refused
 * upload is not kept), checked against their files hash when a build uses them (files-hash.ts), and unpacked for each
 * COPY step by the kit's own reader into a fresh directory: entries are created, never followed (O_NOFOLLOW, O_EXCL,
 * links made as links), so nothing of an upload resolves on the host. Its symlinks mean something only inside the
 * build step's container, where the COPY places them.
 */
import { createHash } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { link, lstat, lutimes, mkdir, mkdtemp, open, rename, rm, symlink, utimes, chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { FilesHasher, type FilesHashResult, notHashable } from './files-hash';
import { TarFormatError, TarReader, type TarEvent } from './tar-reader';
import { type CheckedEntry, MAX_UNPACKED_BYTES, UploadRefused, UploadRules } from './upload-rules';

/** Uploads larger than this are refused (a template's file context, not a disk image). */
export const MAX_UPLOAD_BYTES = 2 * 1024 ** 3;

export class TooLargeError extends Error {}
export { UploadRefused } from './upload-rules';

export interface StoredUpload {
  path: string;
  bytes: number;
  /** sha256 of the bytes as received: what its COPY layers are cached by, and what is checked at each use. */
  sha256: string;
  /** Whether its files hash can be recomputed from it (files-hash.ts): it holds no directory and no hard link. */
  checkable: boolean;
}

/** What reading an upload visits: its checked entries, each one's data, each one's end. */
export interface UploadVisitor {
  entry?(e: CheckedEntry): void | Promise<void>;
  data?(chunk: Buffer): void | Promise<void>;
  endEntry?(): void | Promise<void>;
}

async function startsWithGzip(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/**
 * Reads a stored upload (a gzip tar or a plain tar) once, checking every entry by the upload rules, and answers the
 * sha256 of its bytes. Throws UploadRefused saying why when an entry breaks a rule or the bytes are not a tar.
 */
export async function readUpload(path: string, visitor: UploadVisitor = {}): Promise<{ sha256: string; bytes: number }> {
  const digest = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      digest.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const reader = new TarReader();
  const rules = new UploadRules();
  // Whatever follows the archive's end is read but not kept; it may not unpack without bound either.
  const limit = MAX_UNPACKED_BYTES + 1024 ** 3;
  let unpacked = 0;
  const handle = async (events: TarEvent[]) => {
    for (const ev of events) {
      if (ev.type === 'entry') {
        const checked = rules.check(ev.entry); // always: an optional visitor must not skip the rules
        await visitor.entry?.(checked);
      } else if (ev.type === 'data') await visitor.data?.(ev.chunk);
      else await visitor.endEntry?.();
    }
  };
  // The consumer's own error is what happened; the pipeline reports only that it was cut short.
  let failure: unknown;
  const consume = async (source: AsyncIterable<Buffer>) => {
    try {
      for await (const chunk of source) {
        unpacked += chunk.length;
        if (unpacked > limit) throw new UploadRefused(`the upload unpacks to more than ${limit} bytes`);
        await handle(reader.write(chunk));
      }
      await handle(reader.end());
    } catch (err) {
      failure ??= err;
      throw err;
    }
  };
  try {
    if (await startsWithGzip(path)) await pipeline(createReadStream(path), tap, createGunzip(), consume);
    else await pipeline(createReadStream(path), tap, consume);
    if (failure) throw failure;
  } catch (caught) {
    const err = failure ?? caught;
    if (err instanceof UploadRefused) throw err;
    if (err instanceof TarFormatError) throw new UploadRefused(`the upload is not a readable tar archive: ${err.message}`);
    if ((err as NodeJS.ErrnoException).code?.startsWith('Z_'))
      throw new UploadRefused(`the upload is not a readable gzip stream: ${(err as Error).message}`);
    throw err;
  }
  return { sha256: digest.digest('hex'), bytes };
}

/**
 * Streams an upload to `<dir>/<hash>.tar`, checks every entry (upload-rules.ts), and only then puts it in place,
 * replacing an earlier one atomically; a refused upload leaves nothing behind (UploadRefused, TooLargeError). Past
 * `maxBytes` the rest of the body is read and dropped (drainUnread), not cut off: a client still sending then reads
 * the refusal instead of a broken connection.
 */
export async function saveUpload(dir: string, hash: string, body: Readable, maxBytes = MAX_UPLOAD_BYTES): Promise<StoredUpload> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const final = join(dir, `${hash}.tar`);
  const partial = `${final}.${process.pid}.${Date.now()}.partial`;
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > maxBytes) done(new TooLargeError(`upload larger than ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
  // pipe, not pipeline: a refusal must leave the request (and its connection) to drainUnread.
  const gone = (err?: Error) => counted.destroy(err ?? new Error('the client went away before sending its whole body'));
  const closed = () => {
    if (!body.readableEnded) gone();
  };
  body.on('error', gone).on('close', closed).pipe(counted);
  try {
    await pipeline(counted, createWriteStream(partial, { mode: 0o600 }));
    let checkable = true;
    const read = await readUpload(partial, {
      entry: (e) => {
        if (notHashable(e)) checkable = false;
      },
    });
    await rename(partial, final);
    return { path: final, bytes: read.bytes, sha256: read.sha256, checkable };
  } catch (err) {
    body.unpipe(counted);
    drainUnread(body, seen);
    await rm(partial, { force: true });
    throw err;
  } finally {
    body.off('error', gone).off('close', closed);
  }
}

/**
 * Reads what is left of a refused request's body and drops it, so the refusal reaches a client that is still
 * sending (the E2B SDK reads the answer only if its connection survives); past MAX_UPLOAD_BYTES in all (`seen` read
 * already), more than a legitimate upload sends, the connection is cut.
 */
export function drainUnread(body: Readable, seen = 0): void {
  if (body.readableEnded || body.destroyed) return;
  let total = seen;
  body.on('error', () => undefined);
  body.on('data', (chunk: Buffer) => {
    total += chunk.length;
    if (total > MAX_UPLOAD_BYTES) body.destroy();
  });
  body.resume();
}

/** The SDK's files hash of a COPY of `src` to `dest` recomputed from a stored upload, and the sha256 of its bytes. */
export async function uploadFilesHash(path: string, src: string, dest: string): Promise<FilesHashResult & { sha256: string }> {
  const hasher = new FilesHasher(src, dest);
  const { sha256 } = await readUpload(path, { entry: (e) => hasher.entry(e), data: (c) => hasher.data(c) });
  return { ...hasher.result(), sha256 };
}

/**
 * Unpacks a stored upload into a new directory under `parent` (0700) and answers it. Every entry is created by the
 * kit and nothing existing is followed or replaced: files with O_EXCL|O_NOFOLLOW, symlinks as symlinks (their
 * targets untouched), hard links only to files this upload made; owners are not restored (COPY sets its own), modes
 * and times are. The bytes must still be those whose sha256 the build checked (`sha256`): otherwise nothing is kept.
 */
export async function extractUpload(archive: string, parent: string, sha256: string): Promise<string> {
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(join(parent, 'ctx-'));
  const dirs: Array<{ path: string; mode: number; mtime: number }> = [];
  let file: Awaited<ReturnType<typeof open>> | undefined;
  let current: CheckedEntry | undefined;
  const made = async (p: string) => mkdir(dirname(p), { recursive: true, mode: 0o700 });
  try {
    const read = await readUpload(archive, {
      entry: async (e) => {
        current = e.skip ? undefined : e;
        if (e.skip) return; // under a symlink of the upload: the link is kept, nothing is written through it
        const p = join(dir, e.path);
        if (e.kind === 'directory') {
          if (e.path !== '') {
            await made(p);
            const st = await lstat(p).catch(() => undefined);
            if (!st) await mkdir(p, { mode: 0o700 });
            else if (!st.isDirectory()) throw new UploadRefused(`archive entry ${JSON.stringify(e.path)} replaces a file`);
          }
          dirs.push({ path: p, mode: e.mode, mtime: e.mtime });
          return;
        }
        await made(p);
        if (e.kind === 'file')
          file = await open(p, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
        else if (e.kind === 'symlink') await symlink(e.target, p);
        else await link(join(dir, e.target), p);
      },
      data: async (chunk) => {
        if (file) await file.write(chunk);
      },
      endEntry: async () => {
        const e = current;
        if (!e) return;
        const p = join(dir, e.path);
        if (file) {
          await file.chmod(e.mode);
          await file.close();
          file = undefined;
          await utimes(p, e.mtime, e.mtime);
        } else if (e.kind === 'symlink') await lutimes(p, e.mtime, e.mtime);
        current = undefined;
      },
    });
    if (read.sha256 !== sha256)
      throw new UploadRefused(`the stored upload changed since it was checked (its bytes hash to ${read.sha256}, expected ${sha256})`);
    // Directory modes last, deepest first: a read-only directory still receives its entries.
    for (const d of dirs.sort((a, b) => b.path.length - a.path.length)) {
      await chmod(d.path, d.mode);
      await utimes(d.path, d.mtime, d.mtime);
    }
    return dir;
  } catch (err) {
    await file?.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
