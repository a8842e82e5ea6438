/**
 * The multi-layer test image both OCI template suites check file by file. On top of `from` it adds three layers,
 * tagged `to`: one with the image's own user `app` (uid/gid 1234, home `/srv/app`) and the files whose modes, owners
 * and links a sandbox must show exactly (`/data`: a file, a hard link to it, a symlink, a setuid script, a file of
 * uid 1000 with mode 640, a file a later layer removes, a directory a later layer makes opaque); one making
 * `/data/dir` opaque with `new` its only entry; one whiting out `/data/gone`. The image config sets Env `APP_MODE=lab`,
 * WorkingDir `/srv/app` and User `app`. `extra` may add files to the first layer before it is inserted.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { OciLayoutImages } from '../../../../src/lab/oci-images';

export async function addMultiLayers(
  images: OciLayoutImages,
  opts: { rootfs: string; work: string; from: string; to: string; extra?: (layer: string) => void },
): Promise<void> {
  const a = join(opts.work, 'layer-multi');
  fs.mkdirSync(join(a, 'data', 'dir'), { recursive: true });
  fs.mkdirSync(join(a, 'etc'));
  fs.mkdirSync(join(a, 'srv', 'app'), { recursive: true });
  fs.writeFileSync(
    join(a, 'etc', 'passwd'),
    `${fs.readFileSync(join(opts.rootfs, 'etc', 'passwd'), 'utf8')}app:x:1234:1234::/srv/app:/bin/bash\n`,
  );
  fs.writeFileSync(join(a, 'etc', 'group'), `${fs.readFileSync(join(opts.rootfs, 'etc', 'group'), 'utf8')}app:x:1234:\n`);
  fs.chownSync(join(a, 'srv', 'app'), 1234, 1234);
  fs.writeFileSync(join(a, 'data', 'file'), 'content\n', { mode: 0o644 });
  fs.linkSync(join(a, 'data', 'file'), join(a, 'data', 'hl'));
  fs.symlinkSync('file', join(a, 'data', 'link'));
  fs.writeFileSync(join(a, 'data', 'suid'), '#!/bin/sh\n');
  fs.chmodSync(join(a, 'data', 'suid'), 0o4755);
  fs.writeFileSync(join(a, 'data', 'owned'), 'mine\n');
  fs.chmodSync(join(a, 'data', 'owned'), 0o640);
  fs.chownSync(join(a, 'data', 'owned'), 1000, 1000);
  fs.writeFileSync(join(a, 'data', 'gone'), 'removed by a later layer\n');
  fs.writeFileSync(join(a, 'data', 'dir', 'old'), 'hidden by an opaque directory\n');
  opts.extra?.(a);
  await images.insert(opts.from, a, '/', opts.to);

  const b = join(opts.work, 'layer-opaque');
  fs.mkdirSync(b);
  fs.writeFileSync(join(b, 'new'), 'the only entry\n');
  await images.insert(opts.to, b, '/data/dir', opts.to, true);
  await images.whiteout(opts.to, '/data/gone');
  await images.configure(opts.to, { env: { APP_MODE: 'lab' }, workingDir: '/srv/app', user: 'app' });
}
