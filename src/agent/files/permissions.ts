/**
 * Whether a user may read a file or write into a directory, decided from mode bits, owner and groups as the kernel
 * would for that user (the agent itself runs as root and must not lend its rights to a request).
 */
import type * as fs from 'node:fs';
import type { UserAccount } from '../accounts';

export function allowed(st: fs.Stats, user: UserAccount, groups: number[], want: 'r' | 'w' | 'x'): boolean {
  if (user.uid === 0) return want !== 'x' || (st.mode & 0o111) !== 0 || st.isDirectory();
  const bit = want === 'r' ? 4 : want === 'w' ? 2 : 1;
  if (st.uid === user.uid) return ((st.mode >> 6) & bit) !== 0;
  if (st.gid === user.gid || groups.includes(st.gid)) return ((st.mode >> 3) & bit) !== 0;
  return (st.mode & bit) !== 0;
}
