import { insideBatch, joinNetwork, joinPidProblem, netnsJoinArgv, parkedPeerName, portState } from '../../../src/runtime/network/join-link';

// A bridge namespace that does not exist: had any `ip` run, the error would be its own, not the refusal.
const facts = {
  bridgeNamespace: 'sk-no-such-ns',
  peer: 'wabc',
  port: 'vabc',
  netns: 'n',
  addressWithPrefix: '10.0.0.2/24',
  gateway: '10.0.0.1',
};

describe('the network join (join-link.ts)', () => {
  test('refuses no pid, pid 0 or 1, and a process that is gone, before any ip runs', async () => {
    for (const pid of [Number.NaN, 0, 1, -5, 2.5]) {
      await expect(joinNetwork(facts, pid)).rejects.toThrow(`network join of n: no container pid (got ${pid})`);
    }
    // Past the kernel's largest pid: no such process.
    await expect(joinNetwork(facts, 4_194_305)).rejects.toThrow('network join of n: process 4194305 is gone');
  });

  test("refuses a process in the kit's own network namespace (the link would land on the host), before any ip runs", async () => {
    expect(joinPidProblem(process.pid)).toBe(`process ${process.pid} is in the kit's own network namespace`);
    await expect(joinNetwork(facts, process.pid)).rejects.toThrow(
      `network join of n: process ${process.pid} is in the kit's own network namespace`,
    );
  });

  test("configures eth0 (the link renamed on its way in) with the attachment's address and route, no IPv6 link-local", () => {
    expect(insideBatch(facts).split('\n')).toEqual([
      'link set lo up',
      'link set eth0 addrgenmode none',
      'addr add 10.0.0.2/24 dev eth0',
      'link set eth0 up',
      'route add default via 10.0.0.1',
      '',
    ]);
  });

  test('a refused pid never starts what runs alongside (the container stays created, not started)', async () => {
    let started = false;
    await expect(
      joinNetwork(facts, 0, async () => {
        started = true;
      }),
    ).rejects.toThrow('no container pid');
    expect(started).toBe(false);
  });

  test('the netns-join program gets the namespaces as paths, the address and prefix apart, and the forwarding bound', () => {
    expect(netnsJoinArgv('/k/netns-join', facts, 4242)).toEqual([
      '/k/netns-join',
      '/run/netns/sk-no-such-ns',
      'wabc',
      'vabc',
      '4242',
      '/run/netns/n',
      '10.0.0.2',
      '24',
      '10.0.0.1',
      '2000',
    ]);
  });

  test('with the program too, a refused pid runs nothing (the program is never started)', async () => {
    await expect(joinNetwork(facts, 0, undefined, '/no/such/netns-join')).rejects.toThrow('network join of n: no container pid (got 0)');
  });

  test("reads the port's state from ip's detailed JSON", () => {
    const port = (state: string) =>
      `[{"ifindex":5,"ifname":"vabc","master":"sb","operstate":"UP","linkinfo":{"info_kind":"veth","info_slave_kind":"bridge","info_slave_data":{"state":"${state}","priority":32}}}]\n`;
    expect(portState(port('forwarding'))).toBe('forwarding');
    expect(portState(port('disabled'))).toBe('disabled');
    expect(portState('[{"ifname":"vabc","linkinfo":{"info_kind":"veth"}}]')).toBeUndefined();
    expect(portState('')).toBeUndefined();
    expect(portState('[]')).toBeUndefined();
  });

  test('parked names fit a link name and differ per namespace', () => {
    expect(parkedPeerName('sk-abc')).toMatch(/^w[0-9a-f]{12}$/);
    expect(parkedPeerName('sk-abc')).not.toBe(parkedPeerName('sk-abd'));
  });
});
