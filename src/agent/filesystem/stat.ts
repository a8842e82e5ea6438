/** Stat: the entry at the path itself (a symlink is described, not followed; its target is in symlinkTarget). */
import * as fs from 'node:fs';
import type { UserAccount } from '../accounts';
import { bytesToText } from '../bytes-text';
import { describeEntry, type EntryContext } from './entry';
import { fsError } from '../errors';
import type { StatRequest } from './requests';
import { baseName, resolveRequestPath } from '../paths';

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
