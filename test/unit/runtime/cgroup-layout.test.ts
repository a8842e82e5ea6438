import * as fs from 'node:fs';
import * as path from 'node:path';
import { cgroupFactsFromMountinfo, cgroupMounts, classifyCgroupLayout, selectRuntime } from '../../../src/runtime/cgroup-layout';

const fixture = (name: string) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const both = { crun: true, runc: true };

describe('cgroup layout from captured mount tables', () => {
  test('hybrid with hugetlb in the cgroup2 part (v1 controllers plus a cgroup2 mount): crun needs unified hidden', () => {
    const facts = cgroupFactsFromMountinfo(fixture('mountinfo-hybrid.txt'), ['hugetlb']);
    expect(facts).toEqual({ rootType: 'tmpfs', unifiedType: 'cgroup2', unifiedControllers: ['hugetlb'] });
    const layout = classifyCgroupLayout(facts);
    expect(layout).toEqual({ layout: 'hybrid', crunNeedsHiding: true });
    expect(selectRuntime('auto', layout, both)).toEqual({ name: 'crun', hideUnified: true });
    expect(selectRuntime('runc', layout, both)).toEqual({ name: 'runc', hideUnified: false });
    expect(selectRuntime('auto', layout, { crun: false, runc: true })).toEqual({ name: 'runc', hideUnified: false });
  });

  test('hybrid whose cgroup2 part has no controllers: crun works as it is', () => {
    const layout = classifyCgroupLayout(cgroupFactsFromMountinfo(fixture('mountinfo-hybrid.txt'), []));
    expect(layout).toEqual({ layout: 'hybrid', crunNeedsHiding: false });
    expect(selectRuntime('crun', layout, both)).toEqual({ name: 'crun', hideUnified: false });
  });

  test('pure cgroup v2 (a cloud Debian 12 host): crun directly, never the hiding mount', () => {
    const layout = classifyCgroupLayout(cgroupFactsFromMountinfo(fixture('mountinfo-unified.txt'), ['cpu', 'memory', 'pids']));
    expect(layout).toEqual({ layout: 'unified', crunNeedsHiding: false });
    expect(selectRuntime('auto', layout, both)).toEqual({ name: 'crun', hideUnified: false });
  });

  test('legacy v1 only', () => {
    const layout = classifyCgroupLayout(cgroupFactsFromMountinfo(fixture('mountinfo-legacy.txt'), []));
    expect(layout).toEqual({ layout: 'legacy', crunNeedsHiding: false });
  });

  test('cgroup hierarchies with their controllers (co-mounted ones together)', () => {
    expect(cgroupMounts(fixture('mountinfo-legacy.txt'))).toEqual([
      { mountPoint: '/sys/fs/cgroup/memory', type: 'cgroup', controllers: ['memory'] },
      { mountPoint: '/sys/fs/cgroup/cpu,cpuacct', type: 'cgroup', controllers: ['cpu', 'cpuacct'] },
      { mountPoint: '/sys/fs/cgroup/pids', type: 'cgroup', controllers: ['pids'] },
    ]);
    const hybrid = cgroupMounts(fixture('mountinfo-hybrid.txt'));
    expect(hybrid.find((m) => m.type === 'cgroup2')).toEqual({ mountPoint: '/sys/fs/cgroup/unified', type: 'cgroup2', controllers: [] });
    expect(hybrid.find((m) => m.controllers.includes('name=systemd'))?.mountPoint).toBe('/sys/fs/cgroup/systemd');
    expect(cgroupMounts(fixture('mountinfo-unified.txt'))).toEqual([{ mountPoint: '/sys/fs/cgroup', type: 'cgroup2', controllers: [] }]);
  });
});
