import { exec } from '../../../src/util/exec';
import { MmdebstrapImages } from '../../../src/runtime/base-images';
import { ROOTFS_TIMEOUT_MS } from './helpers/common';
import { CLI } from '../../helpers/cli';

test('an image that cannot be built offline is a usage error naming what is supported', async () => {
  const r = await exec([process.execPath, CLI, 'rootfs', 'ubuntu:24.04']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('base image "ubuntu:24.04" is not available offline; supported: debian:bookworm, debian:12, debian:stable');
});

test(
  'prints the cached base root file system (building it first when missing)',
  async () => {
    const r = await exec([process.execPath, CLI, 'rootfs', 'debian:12'], { timeoutMs: ROOTFS_TIMEOUT_MS });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${new MmdebstrapImages().pathOf('debian:bookworm')}\n`);
  },
  ROOTFS_TIMEOUT_MS,
);
