/**
 * `GET /files`: streams a regular file's bytes; 404 when it does not exist, 400 for a directory. The file is read a
 * pool buffer at a time (buffer-pool.ts), each written with backpressure and given back once its write completed, so
 * many slow downloads leave nothing for the collector; a client that takes nothing for --stall-timeout-ms is dropped.
 */
import * as fs from 'node:fs';
import type * as http from 'node:http';
import type { UserAccount } from '../accounts';
import type { BufferPool } from '../buffer-pool';
import { bytesToText } from '../bytes-text';
import type { AgentServices } from '../call-context';
import { drainOrClose } from '../drain';
import { AgentError, fsError } from '../errors';
import { resolveRequestPath } from '../paths';
import { allowed } from './permissions';
import { Code } from '../../contract/connect-codes';

export async function download(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  requested: string | null,
  user: UserAccount,
  svc: AgentServices,
): Promise<void> {
  if (!requested) throw new AgentError(Code.InvalidArgument, 'GET /files needs the "path" query parameter');
  const p = resolveRequestPath(requested, user.home);
  const shown = bytesToText(p);
  let fd: fs.promises.FileHandle;
  try {
    fd = await fs.promises.open(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw fsError(err, `GET /files ${shown}`);
  }
  try {
    const st = await fd.stat();
    if (st.isDirectory()) throw new AgentError(Code.InvalidArgument, `GET /files ${shown}: is a directory (list it with ListDir)`);
    if (!st.isFile()) throw new AgentError(Code.InvalidArgument, `GET /files ${shown}: not a regular file`);
    if (!allowed(st, user, svc.accounts.supplementaryGroups(user), 'r')) {
      throw new AgentError(Code.PermissionDenied, `GET /files ${shown}: the user ${user.name} may not read it`);
    }
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': st.size,
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(shown.slice(shown.lastIndexOf('/') + 1))}`,
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    await sendFile(fd, st.size, res, svc.buffers, svc.options.stallTimeoutMs);
  } finally {
    await fd.close().catch(() => {});
  }
}

/**
 * Writes the file's first `size` bytes, one pool buffer at a time: with N slow readers the agent holds about N x 2
 * buffers (64 concurrent downloads: ~8 MiB). A file that shrank, a read error or a client gone ends the connection:
 * it cannot carry a correct answer.
 */
async function sendFile(
  fd: fs.promises.FileHandle,
  size: number,
  res: http.ServerResponse,
  pool: BufferPool,
  stallMs: number,
): Promise<void> {
  for (let at = 0; at < size; ) {
    const buf = pool.take();
    let read: number;
    try {
      ({ bytesRead: read } = await fd.read(buf, 0, Math.min(buf.length, size - at), at));
    } catch {
      read = 0;
    }
    if (read === 0 || res.destroyed) {
      pool.give(buf);
      res.destroy();
      return;
    }
    at += read;
    if (!res.write(buf.subarray(0, read), () => pool.give(buf))) {
      await drainOrClose(res, stallMs);
      if (res.destroyed) return;
    }
  }
  res.end();
}
