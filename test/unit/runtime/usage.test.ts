import { mkdtempSync, rmSync, writeFileSync, mkdirSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupFilesOf, cpuUsecOf, diskUsedBytes, memoryOf, parseKeyValues, readSandboxUsage } from '../../../src/runtime/usage';

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

test('a reading: the cgroup files parsed; disk bytes from a walk of the upper dir, or its file system used on a disk of its own', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sk-usage-'));
  try {
    const cgroup = join(dir, 'cgroup', 'sk-x', 'abc');
    mkdirSync(cgroup, { recursive: true });
    writeFileSync(join(cgroup, 'cpu.stat'), 'usage_usec 1234\n');
    writeFileSync(join(cgroup, 'memory.current'), '100000\n');
    writeFileSync(join(cgroup, 'memory.stat'), 'file 40000\ninactive_file 25000\n');
    const upper = join(dir, 'upper');
    mkdirSync(upper);
    writeFileSync(join(upper, 'file'), Buffer.alloc(64 * 1024, 1));
    const mounts = [{ mountPoint: join(dir, 'cgroup'), type: 'cgroup2' as const, controllers: [] }];
    const walked = readSandboxUsage('/sk-x/abc', upper, mounts);
    const fsStats = statfsSync(upper);
    expect(walked).toEqual({
      cpuUsageUsec: 1234,
      memoryUsedBytes: 75_000,
      memoryCacheBytes: 40_000,
      diskUsedBytes: diskUsedBytes(upper),
      diskTotalBytes: fsStats.blocks * fsStats.bsize,
    });
    // On a disk of its own: the whole file system's used blocks (here the test host's, which others write meanwhile).
    const used = () => {
      const st = statfsSync(upper);
      return (st.blocks - st.bfree) * st.bsize;
    };
    const before = used();
    const own = readSandboxUsage('/sk-x/abc', upper, mounts, true)!;
    const after = used();
    expect(own.diskUsedBytes).toBeGreaterThanOrEqual(Math.min(before, after) - 1024 * 1024);
    expect(own.diskUsedBytes).toBeLessThanOrEqual(Math.max(before, after) + 1024 * 1024);
    expect(readSandboxUsage('/sk-x/gone', upper, mounts)).toBeUndefined();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
