/** The two procedures: each turns a validated request into the response body (or throws an AgentError). */
import * as fs from 'node:fs';
import type { UserAccount } from './accounts';
import { bytesToText } from './bytes-text';
import { describeEntry, type EntryContext } from './entry';
import { fsError } from './errors';
import { type ByteBudget, JsonChunks } from './json-chunks';
import { listRoot, walk, type ListDirLimits } from './list-dir';
import type { ListDirRequest, StatRequest } from './messages';
import { baseName, resolveRequestPath } from './paths';

/** Stat: the entry at the path itself (a symlink is described, not followed; its target is in symlinkTarget). */
export function stat(req: StatRequest, user: UserAccount, ctx: EntryContext): string {
  const p = resolveRequestPath(req.path, user.home);
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(p, { bigint: true });
  } catch (err) {
    throw fsError(err, `Stat ${bytesToText(p)}`);
  }
  return `{"entry":${describeEntry(p, baseName(p), st, ctx)}}`;
}

export async function listDir(
  req: ListDirRequest,
  user: UserAccount,
  ctx: EntryContext,
  limits: ListDirLimits,
  budget?: ByteBudget,
): Promise<JsonChunks> {
  const depth = req.depth === 0 ? 1 : req.depth;
  const root = listRoot(resolveRequestPath(req.path, user.home));
  const out = new JsonChunks(budget);
  try {
    out.push('{"entries":[');
    await walk(root, depth, ctx, limits, out);
    out.push(']}');
    return out;
  } catch (err) {
    out.dispose();
    throw err;
  }
}
