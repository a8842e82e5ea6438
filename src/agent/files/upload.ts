/**
 * `POST /files`: each file is streamed to a temporary file in its destination directory, given the user's
 * ownership and its metadata (`X-Metadata-<key>` headers become extended attributes under the brand's namespace),
 * and renamed onto the destination only when it arrived whole. A body cut short, a refused part or a full disk
 * leaves nothing at the destination, and the temporary file is removed.
 */
import * as fs from 'node:fs';
import type * as http from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as zlib from 'node:zlib';
import busboy from 'busboy';
import { setAttributeSync } from '@napi-rs/xattr';
import type { UserAccount } from '../accounts';
import { bytesToText } from '../bytes-text';
import type { AgentServices } from '../call-context';
import { AgentError, fsError } from '../errors';
import { makeDirsAs, parentOf } from '../filesystem/ownership';
import { noteReplaced, uploadTempName } from '../filesystem/upload-trace';
import { resolveRequestPath } from '../paths';
import { allowed } from './permissions';
import { Code } from '../../contract/connect-codes';

interface Written {
  path: string;
  name: string;
  type: 'file';
  metadata?: Record<string, string>;
}

const MAX_PARTS = 1000;

export async function upload(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  queryPath: string | null,
  user: UserAccount,
  svc: AgentServices,
): Promise<void> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const metadata = metadataHeaders(req.rawHeaders);
  let written: Written[];
  if (type.startsWith('multipart/form-data')) {
    written = await multipart(req, queryPath, user, svc, metadata);
  } else {
    if (!queryPath) throw new AgentError(Code.InvalidArgument, 'POST /files with a raw body needs the "path" query parameter');
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      throw new AgentError(
        Code.InvalidArgument,
        `Content-Encoding ${JSON.stringify(encoding)} is not supported for uploads (accepted: identity, gzip)`,
      );
    }
    const source: Readable = encoding === 'gzip' ? req.pipe(zlib.createGunzip()) : req;
    if (encoding === 'gzip') req.on('error', (e) => source.destroy(e));
    written = [await writeFile(source, queryPath, user, svc, metadata)];
  }
  if (written.length === 0) throw new AgentError(Code.InvalidArgument, 'POST /files: the multipart body has no part named "file"');
  const body = JSON.stringify(written);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function multipart(
  req: http.IncomingMessage,
  queryPath: string | null,
  user: UserAccount,
  svc: AgentServices,
  metadata: Record<string, string>,
): Promise<Written[]> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, preservePath: true, limits: { parts: MAX_PARTS, files: MAX_PARTS } });
    } catch (err) {
      reject(new AgentError(Code.InvalidArgument, `POST /files: ${(err as Error).message}`));
      return;
    }
    const writes: Array<Promise<Written>> = [];
    const open = new Set<Readable>();
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      // Parts still being written end with an error, so their temporary files are removed.
      for (const part of open) part.destroy(new Error('the upload was abandoned'));
      reject(
        err instanceof AgentError
          ? err
          : new AgentError(Code.InvalidArgument, `POST /files: the multipart body is not valid: ${(err as Error).message}`),
      );
    };
    bb.on('file', (field, stream, info) => {
      if (field !== 'file' || failed) {
        stream.resume();
        return;
      }
      const destination = queryPath || info.filename || '';
      // A part's error reaches the caller through its write; once that write failed (a full disk) the part may
      // still be destroyed with 'abandoned' below, with no pipeline listening: that must not end the agent.
      stream.on('error', () => undefined);
      open.add(stream);
      stream.once('close', () => open.delete(stream));
      stream.once('end', () => open.delete(stream));
      const w = writeFile(stream, destination, user, svc, metadata);
      w.catch(fail);
      writes.push(w);
    });
    bb.on('error', fail);
    bb.on('partsLimit', () => fail(new AgentError(Code.InvalidArgument, `POST /files: more than ${MAX_PARTS} parts`)));
    req.on('close', () => {
      if (!req.complete) fail(new AgentError(Code.Canceled, 'POST /files: the client closed the connection before the body ended'));
    });
    bb.on('close', () => {
      if (failed) return;
      Promise.all(writes).then(resolve, fail);
    });
    req.pipe(bb);
  });
}

/** Streams `source` to a temporary file beside the destination, then renames it into place. */
async function writeFile(
  source: Readable,
  requested: string,
  user: UserAccount,
  svc: AgentServices,
  metadata: Record<string, string>,
): Promise<Written> {
  if (!requested) {
    source.resume();
    throw new AgentError(Code.InvalidArgument, 'POST /files: a file part has no destination (no "path" query parameter and no filename)');
  }
  if (requested.split('/').includes('..')) {
    source.resume();
    throw new AgentError(
      Code.InvalidArgument,
      `POST /files: destination ${JSON.stringify(requested)} contains a ".." segment; give the path without it`,
    );
  }
  const dest = resolveRequestPath(requested, user.home);
  const shown = bytesToText(dest);
  const dir = parentOf(dest);
  const temp = Buffer.concat([dir, Buffer.from(`/${uploadTempName()}`)]);
  let existing: fs.Stats | undefined;
  try {
    existing = fs.statSync(dest, { throwIfNoEntry: false });
    if (existing?.isDirectory()) throw new AgentError(Code.InvalidArgument, `POST /files ${shown}: is a directory`);
    makeDirsAs(dir, user);
    const dirStat = fs.statSync(dir);
    if (!allowed(dirStat, user, svc.accounts.supplementaryGroups(user), 'w')) {
      throw new AgentError(Code.PermissionDenied, `POST /files ${shown}: the user ${user.name} may not write in ${bytesToText(dir)}`);
    }
    if (existing && !allowed(existing, user, svc.accounts.supplementaryGroups(user), 'w')) {
      throw new AgentError(Code.PermissionDenied, `POST /files ${shown}: the user ${user.name} may not overwrite it`);
    }
  } catch (err) {
    source.resume();
    throw err instanceof AgentError ? err : fsError(err, `POST /files ${shown}`);
  }
  try {
    await pipeline(source, fs.createWriteStream(temp, { flags: 'wx', mode: 0o644 }));
    fs.chownSync(temp, user.uid, user.gid);
    for (const [key, value] of Object.entries(metadata)) setAttributeSync(temp.toString(), `${svc.entries.xattrPrefix}${key}`, value);
    // Noted before the rename, so a watch that hears of it already knows.
    if (existing?.isFile()) noteReplaced(dest.toString());
    fs.renameSync(temp, dest);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    if (err instanceof AgentError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT')
      throw new AgentError(Code.ResourceExhausted, `POST /files ${shown}: no space left on the device`, 507);
    if (
      code === 'ERR_STREAM_PREMATURE_CLOSE' ||
      code === 'ECONNRESET' ||
      code === 'Z_BUF_ERROR' ||
      code === 'Z_DATA_ERROR' ||
      code === undefined
    ) {
      throw new AgentError(
        Code.InvalidArgument,
        `POST /files ${shown}: the body ended early or is not valid (${(err as Error).message}); nothing was written`,
      );
    }
    throw fsError(err, `POST /files ${shown}`);
  }
  const name = shown.slice(shown.lastIndexOf('/') + 1);
  return { path: shown, name, type: 'file', ...(Object.keys(metadata).length > 0 ? { metadata } : {}) };
}

/** `X-Metadata-<key>: value` headers, keys as the client spelled them. */
function metadataHeaders(raw: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length > 11 && name.slice(0, 11).toLowerCase() === 'x-metadata-') out[name.slice(11)] = raw[i + 1]!;
  }
  return out;
}
