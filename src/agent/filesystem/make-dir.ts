/** Filesystem.MakeDir: creates the directory and its missing parents, owned by the request's user. */
import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { Code } from '../../contract/connect-codes';
import { bytesToText } from '../bytes-text';
import type { AgentServices } from '../call-context';
import { AgentError, fsError } from '../errors';
import { type MakeDirRequest, type MakeDirResponse, MakeDirResponseSchema } from '../../contract/gen/filesystem_pb';
import { entryMessage } from './entry-message';
import { makeDirsAs } from './ownership';
import { pathOf, userOf } from './request-user';

export function makeDir(svc: AgentServices, req: MakeDirRequest, ctx: HandlerContext): MakeDirResponse {
  const user = userOf(svc, ctx);
  const p = pathOf(req.path, user);
  const shown = bytesToText(p);
  let created: boolean;
  try {
    created = makeDirsAs(p, user);
  } catch (err) {
    throw fsError(err, `MakeDir ${shown}`);
  }
  if (!created) throw new AgentError(Code.AlreadyExists, `MakeDir ${shown}: already exists`);
  return create(MakeDirResponseSchema, { entry: entryMessage(p, svc.entries) });
}
