import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { plainChrootMountPoints } from '../../../src/runtime/chroot-mount-points';

const DIR = '/opt/mcp-images/img/rootfs';
let scratch: string;
let lower: string;
let upper: string;
const me = process.getuid?.() ?? 0;

beforeEach(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'chroot-mount-points-'));
  lower = path.join(scratch, 'lower');
  upper = path.join(scratch, 'upper');
  fs.mkdirSync(path.join(lower, DIR), { recursive: true, mode: 0o750 });
  fs.chmodSync(path.join(lower, DIR), 0o750);
  fs.mkdirSync(upper);
});

afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

test("an image's dev and proc links get plain directories in the upper dir; the links' targets are untouched", () => {
  const outside = path.join(scratch, 'host-dir');
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(lower, DIR, 'dev'));
  fs.symlinkSync('/etc', path.join(lower, DIR, 'proc'));
  plainChrootMountPoints(upper, [lower], [DIR], me);
  for (const name of ['dev', 'proc']) {
    const st = fs.lstatSync(path.join(upper, DIR, name));
    expect(st.isDirectory()).toBe(true);
    expect(st.uid).toBe(me);
  }
  // The directories on the way look as the lower layer shows them.
  expect(fs.statSync(path.join(upper, DIR)).mode & 0o7777).toBe(0o750);
  expect(fs.readdirSync(outside)).toEqual([]);
});

test('plain directories below, or none at all, leave the upper dir as it is', () => {
  fs.mkdirSync(path.join(lower, DIR, 'dev'));
  plainChrootMountPoints(upper, [lower], [DIR], me);
  expect(fs.readdirSync(upper)).toEqual([]);
});

test("a link of the sandbox's own above the mount point is never followed; one at the mount point is replaced", () => {
  fs.symlinkSync(path.join(lower, DIR, 'dev-elsewhere'), path.join(lower, DIR, 'dev'));
  const outside = path.join(scratch, 'host-dir');
  fs.mkdirSync(outside);
  fs.mkdirSync(path.join(upper, 'opt'));
  fs.symlinkSync(outside, path.join(upper, 'opt', 'mcp-images'));
  plainChrootMountPoints(upper, [lower], [DIR], me);
  expect(fs.readdirSync(outside)).toEqual([]);

  fs.rmSync(path.join(upper, 'opt'), { recursive: true });
  fs.mkdirSync(path.join(upper, DIR), { recursive: true });
  fs.symlinkSync(outside, path.join(upper, DIR, 'proc'));
  plainChrootMountPoints(upper, [lower], [DIR], me);
  expect(fs.lstatSync(path.join(upper, DIR, 'proc')).isDirectory()).toBe(true);
  expect(fs.lstatSync(path.join(upper, DIR, 'dev')).isDirectory()).toBe(true);
  expect(fs.readdirSync(outside)).toEqual([]);
});

test('a chroot dir that is not a plain absolute path is refused', () => {
  expect(() => plainChrootMountPoints(upper, [lower], ['/opt/../../etc'], me)).toThrow(/must be an absolute path of plain names/);
});
