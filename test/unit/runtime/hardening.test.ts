import { admissionProblem, committedBy } from '../../../src/runtime/admission';
import { blockedDestinations, isBlocked, networkOf, resolveAllowed } from '../../../src/runtime/build-egress';
import { namespacedCapability, shiftedId } from '../../../src/runtime/id-shift';

describe('build egress: which destinations a build step may reach', () => {
  const list = blockedDestinations(['192.0.2.0/24']);

  test('loopback, private, CGNAT, link-local, multicast, IPv6 local and the extra ranges are refused; public ones pass', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '224.0.0.1',
      '::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '192.0.2.2',
    ])
      expect([a, isBlocked(list, a)]).toEqual([a, true]);
    for (const a of ['151.101.2.132', '8.8.8.8', '2a04:4e42::644']) expect([a, isBlocked(list, a)]).toEqual([a, false]);
  });

  test('an address literal is checked as given; the refusal names it and the rule', async () => {
    expect(await resolveAllowed('169.254.169.254', list, false)).toEqual({
      ok: false,
      reason:
        'template builds may not reach 169.254.169.254 (169.254.169.254): loopback, private, link-local and metadata destinations are refused',
    });
    expect(await resolveAllowed('[::1]', list, false)).toMatchObject({ ok: false });
    expect(await resolveAllowed('8.8.8.8', list, false)).toEqual({ ok: true, address: '8.8.8.8' });
    expect(await resolveAllowed('localhost', list, true)).toMatchObject({ ok: false });
  });

  test("an interface's network: host bits cleared", () => {
    expect(networkOf('192.0.2.2/24')).toBe('192.0.2.0/24');
    expect(networkOf('10.1.2.3/8')).toBe('10.0.0.0/8');
    expect(networkOf('198.19.7.254/24')).toBe('198.19.7.0/24');
    expect(networkOf('fd00::5/64')).toBe('fd00::5/64');
  });
});

describe('id shifting', () => {
  test('ids move into the range once; ids outside 0..size-1 are refused', () => {
    const m = { base: 100_000, size: 65_536 };
    expect([0, 1000, 65_535, 100_000, 101_000].map((id) => shiftedId(id, m))).toEqual([100_000, 101_000, 165_535, 100_000, 101_000]);
    expect(() => shiftedId(70_000, m)).toThrow('id 70000 is outside the mapped range 0..65535');
  });

  test('a file capability becomes a namespaced (v3) one rooted at the base', () => {
    const v2 = Buffer.alloc(20);
    v2.writeUInt32LE(0x02000001, 0); // revision 2, effective
    v2.writeUInt32LE(1 << 13, 4); // CAP_NET_RAW permitted
    const v3 = namespacedCapability(v2, 100_000)!;
    expect(v3.length).toBe(24);
    expect(v3.readUInt32LE(0)).toBe(0x03000001);
    expect(v3.readUInt32LE(4)).toBe(1 << 13);
    expect(v3.readUInt32LE(20)).toBe(100_000);
    expect(namespacedCapability(Buffer.alloc(4), 1)).toBeUndefined();
  });
});

describe('admission', () => {
  const host = { memoryMB: 4096, cpuCount: 2 };
  const limits = { memoryOvercommit: 2, cpuOvercommit: 4, diskOvercommit: 1.5 };
  test('fits: nothing to say; over the whole host or over the overcommitted total: a message naming the limit', () => {
    expect(admissionProblem({ memoryMB: 1024, cpuCount: 1 }, { memoryMB: 6000, cpuCount: 6 }, host, limits)).toBeUndefined();
    expect(admissionProblem({ memoryMB: 65536, cpuCount: 64 }, { memoryMB: 0, cpuCount: 0 }, host, limits)).toBe(
      'the host cannot take this sandbox: memory: 65536 MB asked, the host has 4096 MB; CPUs: 64 asked, the host has 2',
    );
    expect(admissionProblem({ memoryMB: 2048, cpuCount: 2 }, { memoryMB: 7000, cpuCount: 7 }, host, limits)).toBe(
      'the host cannot take this sandbox now: memory: 2048 MB asked, 7000 MB of 8192 MB committed (host 4096 MB × memoryOvercommit 2); CPUs: 2 asked, 7 of 8 committed (host 2 × cpuOvercommit 4)',
    );
  });
  test('disk: one disk larger than the data root, or past its size × diskOvercommit with the others, is refused naming it', () => {
    const withRoot = { ...host, diskMB: 10_000 };
    const none = { memoryMB: 0, cpuCount: 0 };
    expect(admissionProblem({ ...none, diskMB: 1024 }, { ...none, diskMB: 13_976 }, withRoot, limits)).toBeUndefined();
    expect(admissionProblem({ ...none, diskMB: 1024 }, { ...none, diskMB: 13_977 }, withRoot, limits)).toBe(
      'the host cannot take this sandbox now: disk: 1024 MB asked, 13977 MB of 15000 MB committed (data root 10000 MB × diskOvercommit 1.5)',
    );
    expect(admissionProblem({ ...none, diskMB: 10_001 }, none, withRoot, limits)).toBe(
      'the host cannot take this sandbox: disk: 10001 MB asked, the data root has 10000 MB',
    );
    // A volume's or a build step's disk is named as what it is.
    expect(admissionProblem({ ...none, diskMB: 1024 }, { ...none, diskMB: 13_977 }, withRoot, limits, 'this volume')).toBe(
      'the host cannot take this volume now: disk: 1024 MB asked, 13977 MB of 15000 MB committed (data root 10000 MB × diskOvercommit 1.5)',
    );
    // Without disks (nothing asked, or no data root known) nothing is said about disk.
    expect(admissionProblem(none, { ...none, diskMB: 99_999 }, withRoot, limits)).toBeUndefined();
    expect(admissionProblem({ ...none, diskMB: 99_999 }, none, host, limits)).toBeUndefined();
  });
  test('a config.json commits its memory limit and CPU quota', () => {
    expect(
      committedBy({ linux: { resources: { memory: { limit: 512 * 1024 * 1024 }, cpu: { quota: 150_000, period: 100_000 } } } }),
    ).toEqual({
      memoryMB: 512,
      cpuCount: 1.5,
    });
    expect(committedBy({})).toEqual({ memoryMB: 0, cpuCount: 0 });
  });
});
