/**
 * The standalone sandbox network on a given subnet (a fleet host's delegated prefix) and routed out: the bridge takes
 * the first address, the root side the last, sandboxes the ones between; with routeOut the namespace forwards and
 * sends the rest to the root side. Reopening with another subnet is refused. Root only; one root link, on a subnet
 * no other test uses.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { BridgeNetwork, bridgePortName, macFor } from '../../../src/runtime/network/bridge-network';
import { bundledProgram } from '../../../src/runtime/bundled-program';
import { openSandboxHostNetwork, type SandboxHostNetwork } from '../../../src/runtime/network/host-network';
import { L2_GUARD } from '../../../src/runtime/network/guard-rules';
import { netnsJoinArgv, parkedPeerName } from '../../../src/runtime/network/join-link';
import { uniqueName } from './helpers/common';

const SUBNET = '100.64.250.16/28';
let net: SandboxHostNetwork | undefined;

afterEach(async () => {
  await net?.close();
  net = undefined;
});

test('a delegated /28: addresses, the route out, and no silent move to another subnet', async () => {
  const name = uniqueName('hn');
  net = await openSandboxHostNetwork(name, { subnet: SUBNET, routeOut: true });
  expect({ subnet: net.subnet, gateway: net.gateway, hostAddress: net.hostAddress }).toEqual({
    subnet: SUBNET,
    gateway: '100.64.250.17',
    hostAddress: '100.64.250.30',
  });
  const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' }).trim();
  expect(ip('-n', net.namespace, '-4', 'route', 'show', 'default')).toBe('default via 100.64.250.30 dev host0');
  expect(ip('netns', 'exec', net.namespace, 'sysctl', '-n', 'net.ipv4.ip_forward')).toBe('1');
  // Proxy ARP on both links, answering at once: a held answer (up to 0.8 s by default) delayed every new sandbox's
  // first call.
  for (const link of ['sb', 'host0']) {
    expect(ip('netns', 'exec', net.namespace, 'sysctl', '-n', `net.ipv4.conf.${link}.proxy_arp`)).toBe('1');
    expect(ip('netns', 'exec', net.namespace, 'sysctl', '-n', `net.ipv4.neigh.${link}.proxy_delay`)).toBe('0');
  }
  const attached = await net.network.attach('sbx1');
  expect(attached.address).toBe('100.64.250.18');
  // The root namespace reaches the sandbox's address over the link.
  expect(ip('-4', 'route', 'get', '100.64.250.18')).toMatch(/dev skh/);

  // Found again as it was (a platform restart), the same subnet; another one is refused.
  const again = await openSandboxHostNetwork(name, { subnet: SUBNET, routeOut: true });
  expect(again.subnet).toBe(SUBNET);
  await expect(openSandboxHostNetwork(name, { subnet: '100.64.250.32/28' })).rejects.toThrow(
    `sandbox host network ${name} is on ${SUBNET}, not 100.64.250.32/28`,
  );
});

test('addresses on one bridge: two networks of one process never share one, a freed one is handed out again, and a bridge made again is read again', async () => {
  const name = uniqueName('hn');
  net = await openSandboxHostNetwork(name, { subnet: SUBNET });
  const other = new BridgeNetwork({ ...(net.network as unknown as BridgeNetwork).options, netnsPrefix: `${name}x-` });
  const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' }).trim();
  try {
    // Attaches of both at once: each takes its own address.
    const [a, b, c] = await Promise.all([net.network.attach('sbxa'), other.attach('sbxb'), net.network.attach('sbxc')]);
    const addresses = [a!.address, b!.address, c!.address];
    expect(new Set(addresses).size).toBe(3);
    await Promise.all([a, b, c].map((x) => x!.pending?.made));
    // The kernel agrees: one port per address, each with its own permanent ARP entry on the bridge.
    const neigh = ip('-n', net.namespace, 'neigh', 'show', 'dev', 'sb', 'nud', 'permanent');
    for (const address of addresses) expect(neigh).toContain(`${address} lladdr`);
    await other.detach('sbxb');
    // The freed address is the lowest free one again, and the next attach gets it.
    expect((await net.network.attach('sbxd')).address).toBe(b!.address);
  } finally {
    await other.detach('sbxb');
  }
  // The same name, a new bridge (its namespace made again): its addresses are read from it, not remembered.
  await net.close();
  net = await openSandboxHostNetwork(name, { subnet: SUBNET });
  expect((await net.network.attach('sbxe')).address).toBe('100.64.250.18');
});

test('attach answers before its port is made: join waits for the port, a port that cannot be made fails the join, a detach meanwhile leaves nothing', async () => {
  const name = uniqueName('hn');
  net = await openSandboxHostNetwork(name, { subnet: SUBNET });
  const network = net.network as unknown as BridgeNetwork;
  const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' }).trim();
  const ports = () => ip('-n', net!.namespace, '-o', 'link', 'show', 'master', 'sb');
  const rules = () =>
    execFileSync('ip', ['netns', 'exec', net!.namespace, 'nft', 'list', 'table', 'bridge', L2_GUARD.table], { encoding: 'utf8' });

  // Something else holds the port's name: its making fails, the join says why, and the address is free again.
  const taken = bridgePortName(network.netnsName('sbxf'));
  ip('-n', net.namespace, 'link', 'add', taken, 'type', 'bridge');
  const failing = await network.attach('sbxf');
  await expect(failing.pending!.join(process.pid)).rejects.toThrow(/cannot attach sandbox sbxf/);
  await expect(failing.pending!.made).rejects.toThrow(/cannot attach sandbox sbxf/);
  expect(rules()).not.toContain(taken);

  // A detach right after the attach waits for the port, then removes it with its rules. The port of a policy with
  // domains starts the egress relay first, so its link and rules come well after the attach answered.
  const quick = await network.attach('sbxg', { allowOut: [], denyOut: ['0.0.0.0/0'], allowDomains: ['example.com'] });
  expect(quick.address).toBe(failing.address);
  await network.detach('sbxg');
  await quick.pending!.made; // settled already: what a detach that did not wait would have left is there by now
  expect(ports()).toBe('');
  expect(rules()).not.toContain(bridgePortName(network.netnsName('sbxg')));

  // The legitimate path: once made, the port is on the bridge with its rules.
  const kept = await network.attach('sbxh');
  await kept.pending!.made;
  expect(ports()).toContain(bridgePortName(network.netnsName('sbxh')));
  expect(rules()).toContain(bridgePortName(network.netnsName('sbxh')));
  await network.detach('sbxh');
});

test("a port plugged in by the build's port-plug program is the port the ip and bridge commands make", async () => {
  const name = uniqueName('hn');
  net = await openSandboxHostNetwork(name, { subnet: SUBNET });
  expect(bundledProgram('port-plug')).toBeDefined();
  const viaCommands = new BridgeNetwork({ ...(net.network as unknown as BridgeNetwork).options, netnsPrefix: `${name}c-`, portPlug: null });
  const json = (...args: string[]) => JSON.parse(execFileSync('ip', ['-n', net!.namespace, '-j', ...args], { encoding: 'utf8' }) || '[]');
  // What a port is, without what differs between any two ports (names, indexes, MACs, addresses, counters).
  const facts = (port: string, address: string, mac: string) => {
    const [link] = json('-d', 'link', 'show', 'dev', port) as Array<Record<string, any>>;
    const slave = link!.linkinfo.info_slave_data;
    const fdb = execFileSync('ip', ['netns', 'exec', net!.namespace, 'bridge', 'fdb', 'show', 'dev', port], { encoding: 'utf8' });
    const guard = execFileSync('ip', ['netns', 'exec', net!.namespace, 'nft', 'list', 'table', 'bridge', L2_GUARD.table], {
      encoding: 'utf8',
    });
    return {
      master: link!.master,
      up: (link!.flags as string[]).includes('UP'),
      alias: (link!.ifalias as string).replace(/\S+ \S+$/, ''),
      slave: { isolated: slave.isolated, learning: slave.learning, flood: slave.flood, mcastFlood: slave.mcast_flood },
      neighbour: (json('neigh', 'show', address, 'dev', 'sb') as Array<{ lladdr: string; state: string[] }>).map((n) => [
        n.lladdr === mac,
        n.state,
      ]),
      staticFdb: fdb.includes(`${mac} master sb static`),
      guarded: [guard.includes(`"${port}"`), guard.includes(`"${port}" . ${mac} . ${address}`)],
    };
  };
  const plugged = await net.network.attach('sbxp');
  const commanded = await viaCommands.attach('sbxq');
  try {
    await Promise.all([plugged.pending!.made, commanded.pending!.made]);
    const ports = [
      facts(bridgePortName(`${name}-sbxp`), plugged.address, macFor(plugged.address)),
      facts(bridgePortName(`${name}c-sbxq`), commanded.address, macFor(commanded.address)),
    ];
    expect(ports[0]).toEqual({
      master: 'sb',
      up: true,
      alias: 'sandbox-kit ',
      slave: { isolated: true, learning: false, flood: false, mcastFlood: false },
      neighbour: [[true, ['PERMANENT']]],
      staticFdb: true,
      guarded: [true, true],
    });
    expect(ports[1]).toEqual(ports[0]);
  } finally {
    await net.network.detach('sbxp');
    await viaCommands.detach('sbxq');
  }
});

test("a link joined by the build's netns-join program is the link the ip commands join; the program refuses the bridge's own namespace", async () => {
  const name = uniqueName('hn');
  net = await openSandboxHostNetwork(name, { subnet: SUBNET });
  expect(bundledProgram('netns-join')).toBeDefined();
  const viaCommands = new BridgeNetwork({
    ...(net.network as unknown as BridgeNetwork).options,
    netnsPrefix: `${name}c-`,
    netnsJoin: null,
  });
  const json = (ns: string, ...args: string[]) => JSON.parse(execFileSync('ip', ['-n', ns, '-j', ...args], { encoding: 'utf8' }) || '[]');
  // What a joined sandbox namespace is, without what differs between any two (indexes, MACs, addresses, counters).
  const facts = (ns: string, address: string, port: string) => {
    const links = json(ns, '-d', 'link', 'show') as Array<Record<string, any>>;
    const eth0 = links.find((l) => l.ifname === 'eth0');
    return {
      links: links.map((l) => [l.ifname, (l.flags as string[]).includes('UP')]),
      addrgenmode: eth0?.inet6_addr_gen_mode,
      addresses: (json(ns, 'addr', 'show') as Array<{ ifname: string; addr_info: Array<{ local: string; prefixlen: number }> }>).map(
        (l) => [l.ifname, l.addr_info.map((a) => (a.local === address ? `this/${a.prefixlen}` : `${a.local}/${a.prefixlen}`))],
      ),
      routes: (json(ns, 'route', 'show') as Array<Record<string, any>>).map((r) => [r.dst, r.gateway, r.dev, r.protocol ?? 'boot']),
      port: (json(net!.namespace, '-d', 'link', 'show', 'dev', port) as Array<Record<string, any>>)[0]!.linkinfo.info_slave_data.state,
    };
  };
  const joined = await net.network.attach('sbxj');
  const commanded = await viaCommands.attach('sbxk');
  try {
    await Promise.all([joined.pending!.prepare!(), commanded.pending!.prepare!()]);
    const seen = [
      facts(`${name}-sbxj`, joined.address, bridgePortName(`${name}-sbxj`)),
      facts(`${name}c-sbxk`, commanded.address, bridgePortName(`${name}c-sbxk`)),
    ];
    expect(seen[0]).toEqual({
      links: [
        ['lo', true],
        ['eth0', true],
      ],
      addrgenmode: 'none',
      addresses: [
        ['lo', ['127.0.0.1/8', '::1/128']],
        ['eth0', ['this/28']],
      ],
      routes: [
        ['default', '100.64.250.17', 'eth0', 'boot'],
        ['100.64.250.16/28', undefined, 'eth0', 'kernel'],
      ],
      port: 'forwarding',
    });
    expect(seen[1]).toEqual(seen[0]);
  } finally {
    await net.network.detach('sbxj');
    await viaCommands.detach('sbxk');
  }

  // A process in the bridge's own namespace (a pid that is not the sandbox's): the program refuses it and the parked
  // link stays where it was, so a sandbox's link never lands beside the bridge.
  const hostile = await net.network.attach('sbxl');
  const holder = spawn('ip', ['netns', 'exec', net.namespace, 'sleep', '30'], { stdio: 'ignore' });
  try {
    await hostile.pending!.made;
    // `ip netns exec` enters the namespace, then becomes sleep (one pid).
    const sleeper = holder.pid!;
    const bridgeIno = fs.statSync(`/run/netns/${net.namespace}`).ino;
    while (fs.statSync(`/proc/${sleeper}/ns/net`).ino !== bridgeIno) await new Promise((resolve) => setTimeout(resolve, 5));
    const ns = `${name}-sbxl`;
    const facts = {
      bridgeNamespace: net.namespace,
      peer: parkedPeerName(ns),
      port: bridgePortName(ns),
      netns: ns,
      addressWithPrefix: `${hostile.address}/28`,
      gateway: '100.64.250.17',
    };
    const [program, ...args] = netnsJoinArgv(bundledProgram('netns-join')!, facts, sleeper);
    const run = spawnSync(program!, args, { encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr.trim() }).toEqual({
      status: 1,
      stderr: `netns-join: process ${sleeper} is in the kit's own or the bridge's network namespace`,
    });
    expect(json(net.namespace, 'link', 'show', 'dev', parkedPeerName(ns))).toHaveLength(1);
    expect(execFileSync('ls', ['/run/netns'], { encoding: 'utf8' })).not.toContain(ns);
  } finally {
    holder.kill();
    await net.network.detach('sbxl');
  }
});
