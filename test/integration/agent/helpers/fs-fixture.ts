/** The fixture tree the agent tests list: every kind of entry docs/agent.md talks about. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sh } from './common';

export const BAD_NAME = Buffer.from([0x62, 0x61, 0x64, 0x2d, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]); // "bad-\xff\xfe.txt"
export const BAD_NAME_TEXT = 'bad-\uefff\ueffe.txt';
export const SPARSE_SIZE = 2 ** 40; // 1 TiB, within ext4's and tmpfs' limits

/**
 * root/
 *   Zeta.txt            (uppercase sorts before lowercase, bytewise)
 *   a/                  a/b/ a/b/c/ a/b/c/deep.txt  a/b/mid.txt  a/top.txt
 *   bad-\xff\xfe.txt    a name that is not UTF-8, with metadata user.svc.enc=yes
 *   file.txt            "hello", xattrs: user.svc.color=blue, user.svc.empty="", user.svc.bin=0xfffe, user.other=x, user.e2b.k=v
 *   home/               the test user's home: home/notes.txt
 *   link-dir -> a
 *   link-file -> file.txt
 *   link-nowhere -> missing
 *   loop1 -> loop2, loop2 -> loop1
 *   oddattr.txt         user.svc.ok=1 and an attribute whose name is not UTF-8 (the file then shows no metadata)
 *   ms.txt us.txt ns.txt whole.txt  mtimes with 3, 6, 9 and 0 fraction digits
 *   owned.txt           owned by the test user and group, mode 0640
 *   sparse.bin          1 TiB sparse
 */
export function buildFixture(root: string, owner: { uid: number; gid: number }): void {
  const w = (rel: string, data = '') => fs.writeFileSync(path.join(root, rel), data);
  fs.mkdirSync(path.join(root, 'a/b/c'), { recursive: true });
  fs.mkdirSync(path.join(root, 'home'));
  w('Zeta.txt', 'z');
  w('a/top.txt', 'top');
  w('a/b/mid.txt', 'mid');
  w('a/b/c/deep.txt', 'deep');
  w('home/notes.txt', 'notes');
  w('file.txt', 'hello');
  const file = path.join(root, 'file.txt');
  sh('setfattr', ['-n', 'user.svc.color', '-v', 'blue', file]);
  sh('setfattr', ['-n', 'user.svc.empty', '-v', '""', file]);
  sh('setfattr', ['-n', 'user.svc.bin', '-v', '0xfffe', file]);
  sh('setfattr', ['-n', 'user.other', '-v', 'x', file]);
  sh('setfattr', ['-n', 'user.e2b.k', '-v', 'v', file]);
  fs.symlinkSync('a', path.join(root, 'link-dir'));
  fs.symlinkSync('file.txt', path.join(root, 'link-file'));
  fs.symlinkSync('missing', path.join(root, 'link-nowhere'));
  fs.symlinkSync('loop2', path.join(root, 'loop1'));
  fs.symlinkSync('loop1', path.join(root, 'loop2'));
  w('owned.txt', 'mine');
  fs.chownSync(path.join(root, 'owned.txt'), owner.uid, owner.gid);
  fs.chmodSync(path.join(root, 'owned.txt'), 0o640);
  const sparse = fs.openSync(path.join(root, 'sparse.bin'), 'w');
  fs.ftruncateSync(sparse, SPARSE_SIZE);
  fs.closeSync(sparse);
  const bad = Buffer.concat([Buffer.from(`${root}/`), BAD_NAME]);
  fs.writeFileSync(bad, 'bad');
  // argv cannot carry the non-UTF-8 bytes from here: let the shell's glob find the file.
  sh('sh', ['-c', 'setfattr -n user.svc.enc -v yes "$1"/bad-*.txt', 'sh', root]);
  w('oddattr.txt', 'odd');
  sh('setfattr', ['-n', 'user.svc.ok', '-v', '1', path.join(root, 'oddattr.txt')]);
  sh('sh', ['-c', 'setfattr -n "$(printf "user.svc.\\303\\050")" -v x "$1"', 'sh', path.join(root, 'oddattr.txt')]);
  for (const [name, stamp] of [
    ['ms.txt', '@1700000000.5'],
    ['us.txt', '@1700000000.123456'],
    ['ns.txt', '@1700000000.123456789'],
    ['whole.txt', '@1700000000'],
  ] as const) {
    w(name, name);
    sh('touch', ['-m', '-d', stamp, path.join(root, name)]);
  }
}
