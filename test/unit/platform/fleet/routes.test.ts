/** The fleet's pure rules: which host takes a create, which answers a call about a sandbox, how lists merge. */
import { HOST_TTL_MS, liveHosts, parseHostRecord, type FleetHost } from '../../../../src/platform/fleet/registry';
import { mergePages, placeCreate, routeBySandbox } from '../../../../src/platform/fleet/routes';
import { decodeCursor } from '../../../../src/platform/sandboxes/list';
import { hostNetworkAddresses, subnetCapacity } from '../../../../src/runtime/network/host-network';
import { parseSubnet } from '../../../../src/runtime/network/ipv4';

const host = (hostID: string, sandboxes: number, extra: Partial<FleetHost> = {}): FleetHost => ({
  hostID,
  apiUrl: `http://${hostID}:3001`,
  capacity: 12,
  accepting: true,
  sandboxes,
  templates: ['base', 'sandbox-kit-proxy'],
  seenAt: 1_000,
  ...extra,
});

test('a create goes to the least-loaded host that has the template, here when this is it', () => {
  const hosts = [host('a', 3), host('b', 1), host('c', 0, { templates: ['base'] })];
  expect(placeCreate(hosts, 'a', 'sandbox-kit-proxy')).toMatchObject({ kind: 'forward', host: { hostID: 'b' } });
  expect(placeCreate(hosts, 'b', 'sandbox-kit-proxy')).toEqual({ kind: 'local' });
  expect(placeCreate(hosts, 'a', 'base')).toMatchObject({ kind: 'forward', host: { hostID: 'c' } });
  // No host has it: answered here, as a single host answers an unknown template.
  expect(placeCreate(hosts, 'a', 'nope')).toEqual({ kind: 'local' });
  // An empty registry (this host's first heartbeat not written yet): here.
  expect(placeCreate([], 'a', 'base')).toEqual({ kind: 'local' });
  expect(placeCreate([host('a', 12), host('b', 12)], 'a', 'base')).toEqual({
    kind: 'refuse',
    status: 503,
    message: 'no sandbox host can take a sandbox of base: all 2 accepting sandbox hosts are at capacity',
  });
});

test('a call about a sandbox goes to its holder; a holder that is gone is a 502 naming it', () => {
  const hosts = [host('a', 1), host('b', 1)];
  expect(routeBySandbox('b', hosts, 'a', 's1')).toMatchObject({ kind: 'forward', host: { hostID: 'b' } });
  expect(routeBySandbox('a', hosts, 'a', 's1')).toEqual({ kind: 'local' });
  expect(routeBySandbox(undefined, hosts, 'a', 's1')).toEqual({ kind: 'local' });
  expect(routeBySandbox('z', hosts, 'a', 's1')).toEqual({
    kind: 'refuse',
    status: 502,
    message: 'sandbox "s1" is on host z, which is not answering',
  });
});

test("the hosts' pages merge into one page in the list's order, with the next token when any host has more", () => {
  const s = (id: string, t: number) => ({ sandboxID: id, startedAt: new Date(t * 1000).toISOString() });
  const pages = [
    { items: [s('a3', 30), s('a1', 10)], more: true },
    { items: [s('b2', 20)], more: false },
  ];
  const desc = mergePages(pages, 2, 'desc');
  expect(desc.page.map((x) => x.sandboxID)).toEqual(['a3', 'b2']);
  expect(decodeCursor(desc.nextToken as string)).toEqual({ startedAt: s('b2', 20).startedAt, sandboxID: 'b2' });
  expect(mergePages([{ items: [s('b2', 20)], more: false }], 2, 'desc')).toEqual({ page: [s('b2', 20)] });
  expect(mergePages(pages, 5, 'asc').page.map((x) => x.sandboxID)).toEqual(['a1', 'b2', 'a3']);
});

test('registry records: damaged or stale ones are no hosts', () => {
  const fresh = JSON.stringify({
    apiUrl: 'http://a:3001',
    capacity: 12,
    accepting: true,
    sandboxes: 2,
    templates: ['base'],
    seenAt: 100_000,
  });
  const stale = JSON.stringify({
    apiUrl: 'http://b:3001',
    capacity: 12,
    accepting: true,
    sandboxes: 0,
    templates: [],
    seenAt: 100_000 - HOST_TTL_MS - 1,
  });
  expect(liveHosts({ a: fresh, b: stale, c: '{"apiUrl":1}', d: 'not json' }, 100_000).map((h) => h.hostID)).toEqual(['a']);
  expect(parseHostRecord('a', fresh)).toMatchObject({ hostID: 'a', sandboxes: 2, templates: ['base'] });
});

test("a subnet's sandbox addresses: first for the bridge, last for the host, the rest for sandboxes", () => {
  expect(hostNetworkAddresses(parseSubnet('10.0.1.16/28'))).toEqual({
    subnet: '10.0.1.16/28',
    gateway: '10.0.1.17',
    hostAddress: '10.0.1.30',
  });
  expect(hostNetworkAddresses(parseSubnet('198.19.7.0/24'))).toMatchObject({ gateway: '198.19.7.1', hostAddress: '198.19.7.254' });
  expect(subnetCapacity('10.0.1.16/28')).toBe(12);
  expect(subnetCapacity('198.19.7.0/24')).toBe(252);
  expect(subnetCapacity(undefined)).toBe(0);
});
