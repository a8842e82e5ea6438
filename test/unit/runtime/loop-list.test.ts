import { parseLoopList } from '../../../src/runtime/sandbox-disk';

test('losetup --list --raw: devices and their backing files, spaces decoded, "(deleted)" dropped', () => {
  const text = ['/dev/loop0 /var/lib/x/a.disk', '/dev/loop1 /var/lib/x/with\\x20space.disk (deleted)', '/dev/loop12 /v/b.img', ''].join(
    '\n',
  );
  expect(parseLoopList(text)).toEqual([
    { device: '/dev/loop0', backFile: '/var/lib/x/a.disk' },
    { device: '/dev/loop1', backFile: '/var/lib/x/with space.disk' },
    { device: '/dev/loop12', backFile: '/v/b.img' },
  ]);
  expect(parseLoopList('')).toEqual([]);
});
