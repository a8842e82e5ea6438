/**
 * COPY archives: stored once per files hash (the hash covers paths, modes, sizes and contents, so one hash is one
 * set of files), extracted into a fresh directory for each COPY step that needs them.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Uploads larger than this are refused (a template's file context, not a disk image). */
export const MAX_UPLOAD_BYTES = 2 * 1024 ** 3;

export class TooLargeError extends Error {}

/**
 * Streams an upload to `<dir>/<hash>.tar`, replacing it atomically; the body may be a gzip tar or a plain tar.
 * Answers where it is, its size and the sha256 of its bytes (what its COPY layers are cached by).
 */
export async function saveUpload(
  dir: string,
  hash: string,
  body: Readable,
  maxBytes = MAX_UPLOAD_BYTES,
): Promise<{ path: string; bytes: number; sha256: string }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const final = join(dir, `${hash}.tar`);
  const partial = `${final}.${process.pid}.${Date.now()}.partial`;
  let seen = 0;
  const digest = createHash('sha256');
  body.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    digest.update(chunk);
    if (seen > maxBytes) body.destroy(new TooLargeError(`upload larger than ${maxBytes} bytes`));
  });
  try {
    await pipeline(body, createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, final);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  return { path: final, bytes: seen, sha256: digest.digest('hex') };
}

async function isGzip(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/**
 * Extracts an archive into a new directory under `parent`. GNU tar refuses members that climb out with `..` and
 * strips leading `/`, so nothing lands outside; owners are not restored (COPY sets its own).
 */
export async function extractArchive(archive: string, parent: string): Promise<string> {
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(join(parent, 'ctx-'));
  const args = ['-x', ...((await isGzip(archive)) ? ['-z'] : []), '-f', archive, '-C', dir, '--no-same-owner', '--no-overwrite-dir'];
  const stderr: string[] = [];
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn('tar', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (d: Buffer) => stderr.push(d.toString()));
    child.once('error', reject);
    child.once('close', (c) => resolve(c ?? 1));
  });
  if (code !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`the uploaded archive could not be extracted (tar exit ${code}): ${stderr.join('').trim()}`);
  }
  return dir;
}
