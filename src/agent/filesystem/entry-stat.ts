/**
 * What an entry's JSON needs of its lstat: from node:fs (entryStatOf), or from the native walk (native-walk.ts), which
 * also tells whether the entry may hold metadata at all; node:fs cannot, so from it an entry always may.
 */
import type * as fs from 'node:fs';
import { secondsAndNanos } from './timestamp';

export interface EntryStat {
  mode: number;
  uid: number;
  gid: number;
  /** st_size: a number up to 2^53-1, the exact bigint above. */
  size: number | bigint;
  /** st_mtime: whole seconds (negative before 1970) and nanoseconds 0..999,999,999. */
  mtimeSec: number;
  mtimeNsec: number;
  /** False when the entry surely has no extended attribute under the metadata prefix; then none is read. */
  mayHaveMetadata: boolean;
}

/** The EntryStat of a node:fs lstat/stat result. */
export function entryStatOf(st: fs.BigIntStats): EntryStat {
  const size = Number(st.size);
  const { seconds, nanos } = secondsAndNanos(st.mtimeNs);
  return {
    mode: Number(st.mode),
    uid: Number(st.uid),
    gid: Number(st.gid),
    size: size <= Number.MAX_SAFE_INTEGER ? size : st.size,
    mtimeSec: seconds,
    mtimeNsec: nanos,
    mayHaveMetadata: true,
  };
}
