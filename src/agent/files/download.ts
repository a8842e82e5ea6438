/** `GET /files`: streams a regular file's bytes; 404 when it does not exist, 400 for a directory. */
import * as fs from 'node:fs';
import type * as http from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { UserAccount } from '../accounts';
import { bytesToText } from '../bytes-text';
import type { AgentServices } from '../call-context';
import { AgentError, fsError } from '../errors';
import { resolveRequestPath } from '../paths';
import { allowed } from './permissions';
import { Code } from '../../contract/connect-codes';

/**
 * What one download reads ahead of its socket: with N slow readers the agent holds about N x 2 of these, so they stay
 * small (64 concurrent downloads: ~8 MiB; at 1 MiB they were 128 MiB of the agent's memory).
 */
const DOWNLOAD_CHUNK_BYTES = 64 * 1024;

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
    await pipeline(fd.createReadStream({ autoClose: false, highWaterMark: DOWNLOAD_CHUNK_BYTES }), res).catch(() => {
      res.destroy(); // the client went away, or the file shrank: the connection cannot carry a correct answer
    });
  } finally {
    await fd.close().catch(() => {});
  }
}
