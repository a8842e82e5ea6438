import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupFilesOf, cpuUsecOf, diskUsedBytes, memoryOf, parseKeyValues } from '../../../src/runtime/usage';

test('cgroup v1 and v2 readings: CPU microseconds, memory without inactive page cache', () => {
  expect(cpuUsecOf('v1', '2500000000\n')).toBe(2_500_000);
  expect(cpuUsecOf('v2', 'usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n')).toBe(1234);
  expect(memoryOf('v1', 100_000, 'cache 9\ntotal_cache 30000\ntotal_inactive_file 20000\n')).toEqual({ used: 80_000, cache: 30_000 });
  expect(memoryOf('v2', 100_000, 'anon 50000\nfile 40000\ninactive_file 25000\n')).toEqual({ used: 75_000, cache: 40_000 });
  expect(parseKeyValues('a 1\nbad line here\nb x\n')).toEqual(new Map([['a', 1]]));
});

test('the files come from the v1 controllers when mounted, else from cgroup2', () => {
  const v1 = [
    { mountPoint: '/sys/fs/cgroup/cpu,cpuacct', type: 'cgroup' as const, controllers: ['cpu', 'cpuacct'] },
    { mountPoint: '/sys/fs/cgroup/memory', type: 'cgroup' as const, controllers: ['memory'] },
    { mountPoint: '/sys/fs/cgroup/unified', type: 'cgroup2' as const, controllers: [] },
  ];
  expect(cgroupFilesOf('/sk-x/abc', v1)).toEqual({
    cpu: { kind: 'v1', file: '/sys/fs/cgroup/cpu,cpuacct/sk-x/abc/cpuacct.usage' },
    memoryCurrent: '/sys/fs/cgroup/memory/sk-x/abc/memory.usage_in_bytes',
    memoryStat: { kind: 'v1', file: '/sys/fs/cgroup/memory/sk-x/abc/memory.stat' },
  });
  expect(cgroupFilesOf('/sk-x/abc', [{ mountPoint: '/sys/fs/cgroup', type: 'cgroup2', controllers: [] }])).toEqual({
    cpu: { kind: 'v2', file: '/sys/fs/cgroup/sk-x/abc/cpu.stat' },
    memoryCurrent: '/sys/fs/cgroup/sk-x/abc/memory.current',
    memoryStat: { kind: 'v2', file: '/sys/fs/cgroup/sk-x/abc/memory.stat' },
  });
  expect(cgroupFilesOf('/x', [])).toBeUndefined();
});

test('disk use counts allocated blocks of files under the upper dir, not following links', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sk-usage-'));
  try {
    mkdirSync(join(dir, 'a/b'), { recursive: true });
    writeFileSync(join(dir, 'a/b/file'), Buffer.alloc(64 * 1024, 1));
    const used = diskUsedBytes(dir);
    expect(used).toBeGreaterThanOrEqual(64 * 1024);
    expect(used).toBeLessThan(1024 * 1024);
    expect(diskUsedBytes(join(dir, 'missing'))).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
