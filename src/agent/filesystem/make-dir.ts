/** Filesystem.MakeDir: creates the directory and its missing parents, owned by the request's user. */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext } from '@connectrpc/connect';
import { bytesToText } from '../bytes-text';
import type { AgentServices } from '../call-context';
import { fsError } from '../errors';
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
  if (!created) throw new ConnectError(`MakeDir ${shown}: already exists`, Code.AlreadyExists);
  return create(MakeDirResponseSchema, { entry: entryMessage(p, svc.entries) });
}
