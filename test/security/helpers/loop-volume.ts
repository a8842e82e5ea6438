/**
 * A small file system of a test's own: a sparse image, formatted, loop-mounted on a fresh directory. What a test
 * measures on it (free space) is its own, not the shared host disk's. `remove` unmounts (the loop device goes with
 * it) and deletes everything; it is safe to call after any failure, and twice.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface LoopVolume {
  mountPoint: string;
  /** Free bytes for an unprivileged writer, now. */
  freeBytes(): number;
  remove(): void;
}

export function makeLoopVolume(parent: string, sizeMB: number): LoopVolume {
  const dir = fs.mkdtempSync(path.join(parent, 'vol-'));
  const image = path.join(dir, 'image');
  const mountPoint = path.join(dir, 'mnt');
  fs.mkdirSync(mountPoint);
  const remove = () => {
    if (spawnSync('mountpoint', ['-q', mountPoint]).status === 0) {
      if (spawnSync('umount', [mountPoint]).status !== 0) spawnSync('umount', ['-l', mountPoint]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    fs.writeFileSync(image, '');
    fs.truncateSync(image, sizeMB * 1024 * 1024);
    execFileSync('mkfs.ext4', ['-q', '-F', '-E', 'nodiscard', image]);
    execFileSync('mount', ['-o', 'loop', image, mountPoint]);
  } catch (err) {
    remove();
    throw err;
  }
  return {
    mountPoint,
    freeBytes: () => {
      const s = fs.statfsSync(mountPoint);
      return s.bavail * s.bsize;
    },
    remove,
  };
}
