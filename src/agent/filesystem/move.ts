/** Filesystem.Move: renames source to destination (missing parents of the destination are made for the user). */
import * as fs from 'node:fs';
import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { bytesToText } from '../bytes-text';
import type { AgentServices } from '../call-context';
import { fsError } from '../errors';
import { type MoveRequest, type MoveResponse, MoveResponseSchema } from '../../contract/gen/filesystem_pb';
import { entryMessage } from './entry-message';
import { makeDirsAs, parentOf } from './ownership';
import { pathOf, userOf } from './request-user';

export function move(svc: AgentServices, req: MoveRequest, ctx: HandlerContext): MoveResponse {
  const user = userOf(svc, ctx);
  const from = pathOf(req.source, user, 'source');
  const to = pathOf(req.destination, user, 'destination');
  const what = `Move ${bytesToText(from)} -> ${bytesToText(to)}`;
  try {
    fs.lstatSync(from);
    makeDirsAs(parentOf(to), user);
    fs.renameSync(from, to);
  } catch (err) {
    throw fsError(err, what);
  }
  return create(MoveResponseSchema, { entry: entryMessage(to, svc.entries) });
}
