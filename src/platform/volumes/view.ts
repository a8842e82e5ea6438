/** How volumes and their entries look on the wire (E2B's Volume, VolumeAndToken and VolumeEntryStat). */
import type * as fs from 'node:fs';
import type { VolumeRecord } from './store';

export function volumeInfo(record: VolumeRecord) {
  return { volumeID: record.volumeID, name: record.name };
}

/** Create and get: with the token for the volume's file API. */
export function volumeAndToken(record: VolumeRecord) {
  return { ...volumeInfo(record), token: record.token };
}

function typeOf(stat: fs.Stats): 'file' | 'directory' | 'symlink' | 'unknown' {
  if (stat.isFile()) return 'file';
  if (stat.isDirectory()) return 'directory';
  if (stat.isSymbolicLink()) return 'symlink';
  return 'unknown';
}

/** One entry; ids as the sandboxes see them (`insideId`), the path from the volume's root. */
export function entryStat(path: string, stat: fs.Stats, insideId: (host: number) => number, target?: string) {
  return {
    name: path === '/' ? '' : (path.split('/').at(-1) as string),
    path,
    type: typeOf(stat),
    size: stat.size,
    mode: stat.mode & 0o7777,
    uid: insideId(stat.uid),
    gid: insideId(stat.gid),
    atime: stat.atime.toISOString(),
    mtime: stat.mtime.toISOString(),
    ctime: stat.ctime.toISOString(),
    ...(target !== undefined ? { target } : {}),
  };
}
