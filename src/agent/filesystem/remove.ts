/**
 * Filesystem.Remove: removes a file, a symlink (not its target) or a directory with everything in it. A path that
 * does not exist is already removed: success, as E2B's envd answers (SDK code calls remove to make sure).
 */
import * as fs from 'node:fs';
import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { bytesToText } from '../bytes-text';
import type { AgentServices } from '../call-context';
import { fsError } from '../errors';
import { type RemoveRequest, type RemoveResponse, RemoveResponseSchema } from '../../contract/gen/filesystem_pb';
import { pathOf, userOf } from './request-user';

export async function remove(svc: AgentServices, req: RemoveRequest, ctx: HandlerContext): Promise<RemoveResponse> {
  const p = pathOf(req.path, userOf(svc, ctx));
  try {
    await fs.promises.rm(p, { recursive: true, force: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return create(RemoveResponseSchema, {});
    throw fsError(err, `Remove ${bytesToText(p)}`);
  }
  return create(RemoveResponseSchema, {});
}
