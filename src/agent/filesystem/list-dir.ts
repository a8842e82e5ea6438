/** ListDir: the walk (walk.ts) of the listed directory, written as JSON chunks while it runs (json-chunks.ts). */
import type { UserAccount } from '../accounts';
import type { BufferPool } from '../buffer-pool';
import type { EntryContext } from './entry';
import { type ByteBudget, JsonChunks } from './json-chunks';
import type { ListDirRequest } from './requests';
import { listRoot, walk, type ListDirLimits } from './walk';
import { resolveRequestPath } from '../paths';

export async function listDir(
  req: ListDirRequest,
  user: UserAccount,
  ctx: EntryContext,
  limits: ListDirLimits,
  budget?: ByteBudget,
  pool?: BufferPool,
): Promise<JsonChunks> {
  const depth = req.depth === 0 ? 1 : req.depth;
  const root = listRoot(resolveRequestPath(req.path, user.home));
  const out = new JsonChunks(budget, pool);
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
