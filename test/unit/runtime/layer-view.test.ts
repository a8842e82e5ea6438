/**
 * The merged view of layers read from the host: symlinks resolve inside the layers (an absolute target from the
 * stack's root, `..` stopping there), never on the host; whiteouts hide; a file is read only when it is a regular one.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsInLayers, insideTree, readInLayers, resolveInLayers } from '../../../src/runtime/layer-view';

let work: string;
let upper: string;
let lower: string;
beforeEach(() => {
  work = fs.mkdtempSync(join(tmpdir(), 'sk-layer-view-'));
  upper = join(work, 'upper');
  lower = join(work, 'lower');
  fs.mkdirSync(join(lower, 'etc'), { recursive: true });
  fs.mkdirSync(join(upper, 'etc'), { recursive: true });
  fs.writeFileSync(join(lower, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  fs.writeFileSync(join(lower, 'etc', 'hostname'), 'lower\n');
});
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

test('the topmost layer wins; a lower one shows through a directory both have', () => {
  fs.writeFileSync(join(upper, 'etc', 'hostname'), 'upper\n');
  expect(readInLayers([upper, lower], 'etc/hostname')).toBe('upper\n');
  expect(readInLayers([upper, lower], '/etc/passwd')).toMatch(/^root:/);
  expect(existsInLayers([upper, lower], 'etc/nothing')).toBe(false);
});

test("a layer's symlink to a host path resolves inside the layers, never on the host", () => {
  // /etc/passwd -> /proc/self/environ (absolute: from the stack's root, where there is no /proc)
  fs.symlinkSync('/proc/self/environ', join(upper, 'etc', 'passwd'));
  expect(readInLayers([upper, lower], 'etc/passwd')).toBeUndefined();
  // ../../../../etc/hostname climbs no higher than the stack's root: it is the layers' /etc/hostname
  fs.symlinkSync('../../../../../../etc/hostname', join(upper, 'etc', 'up'));
  expect(readInLayers([upper, lower], 'etc/up')).toBe('lower\n');
  // a directory symlink to / : /root-link/etc/hostname is the layers' /etc/hostname
  fs.symlinkSync('/', join(upper, 'root-link'));
  expect(readInLayers([upper, lower], 'root-link/etc/hostname')).toBe('lower\n');
  expect(resolveInLayers([upper, lower], 'root-link', false)?.stat.isSymbolicLink()).toBe(true);
  // a loop ends
  fs.symlinkSync('loop', join(upper, 'loop'));
  expect(existsInLayers([upper, lower], 'loop/x')).toBe(false);
});

test('a host path under a lower layer is never reached through an upper layer that made a directory a symlink', () => {
  // The upper layer replaced /etc by a symlink to the host's /etc (outside the stack): lookups stay in the layers.
  fs.rmSync(join(upper, 'etc'), { recursive: true });
  fs.symlinkSync(join(lower, '..', '..'), join(upper, 'etc'));
  expect(readInLayers([upper, lower], 'etc/passwd')).toBeUndefined();
});

test('only a regular file is read: a device, a FIFO or a directory is not', () => {
  fs.symlinkSync('/dev/zero', join(upper, 'etc', 'group'));
  expect(readInLayers([upper, lower], 'etc/group')).toBeUndefined();
  expect(readInLayers([upper, lower], 'etc')).toBeUndefined();
});

test('insideTree: every directory above the path is a real one', () => {
  fs.mkdirSync(join(upper, 'tmp'));
  expect(insideTree(upper, 'tmp/.mount')).toBe(true);
  fs.symlinkSync('/', join(upper, 'out'));
  expect(insideTree(upper, 'out/.mount')).toBe(false);
  expect(insideTree(upper, '../x')).toBe(false);
});
