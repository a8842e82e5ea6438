/**
 * `/files`: whole files over plain HTTP.
 * - `GET /files?path=&username=`: the file's bytes, streamed, with Content-Length.
 * - `POST /files?path=&username=`: `multipart/form-data` (every part named `file`; its destination is the `path`
 *   query when given, else the part's filename; several parts per request) or a raw body
 *   (`application/octet-stream`, optionally `Content-Encoding: gzip`) to `path`. Answer: the JSON array of the
 *   written files.
 * Either the access token or a signed URL (`signature`, `signature_expiration`) authorises the call. The user
 * (`username`, else the default user) resolves relative paths and owns what is written.
 */
import type * as http from 'node:http';
import type { UserAccount } from '../accounts';
import { checkAccessToken, userNamed } from '../auth';
import type { AgentServices } from '../call-context';
import { AgentError } from '../errors';
import { sendError } from '../send-error';
import { download } from './download';
import { signatureProblem, type FileOperation } from '../../contract/file-signature';
import { upload } from './upload';
import { Code } from '../../contract/connect-codes';

export async function handleFiles(req: http.IncomingMessage, res: http.ServerResponse, svc: AgentServices): Promise<void> {
  const method = req.method ?? '';
  if (method !== 'GET' && method !== 'POST') {
    return sendError(
      req,
      res,
      new AgentError(Code.Unimplemented, `${method} /files is not supported: use GET to read, POST to write`, 405, { allow: 'GET, POST' }),
    );
  }
  const query = new URL(req.url ?? '/', 'http://agent').searchParams;
  const operation: FileOperation = method === 'GET' ? 'read' : 'write';
  try {
    authorise(req, query, operation, svc);
    const username = query.get('username');
    const user: UserAccount = userNamed(
      username || svc.state.defaultUser,
      svc.accounts,
      username ? 'the "username" query parameter' : 'the default user',
    );
    if (method === 'GET') await download(req, res, query.get('path'), user, svc);
    else await upload(req, res, query.get('path'), user, svc);
  } catch (err) {
    if (!(err instanceof AgentError)) throw err;
    sendError(req, res, err);
  }
}

function authorise(req: http.IncomingMessage, query: URLSearchParams, operation: FileOperation, svc: AgentServices): void {
  if (svc.state.accessToken === undefined) return;
  const signature = query.get('signature');
  if (signature !== null) {
    const problem = signatureProblem(
      signature,
      query.get('signature_expiration'),
      query.get('path') ?? '',
      operation,
      query.get('username') ?? '',
      svc.state.accessToken,
      Math.floor(Date.now() / 1000),
    );
    if (problem) throw new AgentError(Code.Unauthenticated, `signed URL refused: ${problem}`);
    return;
  }
  checkAccessToken(req.headers, svc.state.accessToken);
}
