/**
 * `permissions` text as Go's os.FileMode.String() writes it (what existing clients of this service show):
 * type letters from "dalTLDpSugct?" for each set bit, or "-" when none, then rwxrwxrwx.
 * Examples: "-rw-r--r--", "drwxr-xr-x", "Lrwxrwxrwx", "dtrwxrwxrwx" (sticky dir), "Dcrw-rw-rw-" (char device).
 */
const S_IFMT = 0o170000;
const S_IFSOCK = 0o140000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const S_IFBLK = 0o060000;
const S_IFDIR = 0o040000;
const S_IFCHR = 0o020000;
const S_IFIFO = 0o010000;
const S_ISUID = 0o4000;
const S_ISGID = 0o2000;
const S_ISVTX = 0o1000;

export type RawKind = 'file' | 'dir' | 'symlink' | 'other';

export function kindOf(mode: number): RawKind {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return 'file';
    case S_IFDIR:
      return 'dir';
    case S_IFLNK:
      return 'symlink';
    default:
      return 'other';
  }
}

export function goModeString(mode: number): string {
  const type = mode & S_IFMT;
  // Letters in Go's bit order: d a l T L D p S u g c t ?  (a, l, T are never set from a Linux stat)
  let s = '';
  if (type === S_IFDIR) s += 'd';
  if (type === S_IFLNK) s += 'L';
  if (type === S_IFBLK || type === S_IFCHR) s += 'D';
  if (type === S_IFIFO) s += 'p';
  if (type === S_IFSOCK) s += 'S';
  if (mode & S_ISUID) s += 'u';
  if (mode & S_ISGID) s += 'g';
  if (type === S_IFCHR) s += 'c';
  if (mode & S_ISVTX) s += 't';
  if (s === '') s = '-';
  const rwx = 'rwxrwxrwx';
  for (let i = 0; i < 9; i++) s += mode & (1 << (8 - i)) ? rwx[i] : '-';
  return s;
}
