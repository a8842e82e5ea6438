import {
  attachPortCommands,
  boundOf,
  detachPortScript,
  GUARD_CHAINS,
  guardScript,
  L2_GUARD,
  portGuardRules,
  portPlugArgv,
  portUnguardRules,
} from '../../../src/runtime/network/guard-rules';
import { nameserversOf } from '../../../src/runtime/sandbox-etc';

describe('the sandbox guard', () => {
  const script = guardScript({ bridge: 'sb', rootLink: 'host0', dnsResolvers: ['10.0.0.2'], blocked: ['10.0.0.0/8', '169.254.0.0/16'] });
  const rules = script.split('\n');
  const at = (needle: string) => rules.findIndex((l) => l.includes(needle));

  it('drops sandbox-to-sandbox and the bridge namespace itself before anything is accepted', () => {
    expect(at('-i sb -o sb -j DROP')).toBeGreaterThan(-1);
    expect(at('-i sb -o sb -j DROP')).toBeLessThan(at(`-i sb -j ${GUARD_CHAINS.policy}`));
    expect(rules).toContain(`-A ${GUARD_CHAINS.input} -i sb -j DROP`);
  });

  it('lets DNS through to the given resolver only, before the policy and the private-range drops', () => {
    expect(rules).toContain(`-A ${GUARD_CHAINS.forward} -i sb -d 10.0.0.2/32 -p udp --dport 53 -j ACCEPT`);
    expect(rules.filter((l) => l.includes('--dport 53') && l.includes('ACCEPT'))).toHaveLength(2);
    expect(at('--dport 53')).toBeLessThan(at(`-i sb -j ${GUARD_CHAINS.policy}`));
    expect(at(`-i sb -j ${GUARD_CHAINS.policy}`)).toBeLessThan(at('-d 10.0.0.0/8 -j DROP'));
    expect(at('-d 169.254.0.0/16 -j DROP')).toBeLessThan(at(`-A ${GUARD_CHAINS.forward} -i sb -j ACCEPT`));
  });

  it('admits new connections into sandboxes from the root link only', () => {
    expect(rules).toContain(`-A ${GUARD_CHAINS.forward} -i host0 -o sb -p tcp -m conntrack --ctstate NEW -j ACCEPT`);
    expect(rules.indexOf(`-A ${GUARD_CHAINS.forward} -o sb -j DROP`)).toBeGreaterThan(at('-i host0 -o sb'));
  });

  it('guards every frame from a sandbox port by its port, MAC and address: IPv4 and ARP only, the rest dropped', () => {
    const t = `bridge ${L2_GUARD.table}`;
    const guard = rules.filter((l) => l.startsWith(`add rule ${t} guard `));
    expect(guard).toEqual([
      `add rule ${t} guard ether type ip iifname . ether saddr . ip saddr @${L2_GUARD.bound} return`,
      `add rule ${t} guard ether type arp arp htype 1 arp ptype ip arp hlen 6 arp plen 4 iifname . ether saddr . arp saddr ip @${L2_GUARD.bound} iifname . arp saddr ether . arp saddr ip @${L2_GUARD.bound} return`,
      `add rule ${t} guard drop`,
    ]);
    for (const hook of ['input', 'forward']) expect(rules).toContain(`add rule ${t} ${hook} iifname @${L2_GUARD.ports} jump guard`);
    // Loaded again (a restart), the chains are emptied first, never doubled; the sets' elements stay.
    expect(at(`flush chain ${t} guard`)).toBeLessThan(at(`add rule ${t} guard`));
    expect(rules).not.toContain(`flush set ${t} ${L2_GUARD.bound}`);
  });

  it('binds a port to its MAC and address, and plugs it in only after', () => {
    const facts = { port: 'vabc', mac: '02:53:c6:13:02:02', address: '198.19.2.2' };
    const port = portGuardRules(facts);
    expect(port).toBe(
      `add element bridge ${L2_GUARD.table} ports { "vabc" }\nadd element bridge ${L2_GUARD.table} bound { "vabc" . 02:53:c6:13:02:02 . 198.19.2.2 }\n`,
    );
    expect(() => portGuardRules({ port: 'v"; flush ruleset', mac: '02:53:c6:13:02:02', address: '198.19.2.2' })).toThrow(
      /invalid port name/,
    );
    expect(() => portGuardRules({ port: 'vabc', mac: '02:53:c6:13:02:02 }', address: '198.19.2.2' })).toThrow(/invalid MAC or IPv4/);
    const attach = attachPortCommands(
      { port: 'vabc', peer: 'pabc', mac: '02:53:c6:13:02:02', address: '198.19.2.2', alias: 'sandbox-kit ns 198.19.2.2' },
      'sb',
    );
    expect(attach.rules).toBe(port);
    const links = attach.links.trim().split('\n');
    expect(links[0]).toBe('link add vabc type veth peer name pabc address 02:53:c6:13:02:02');
    expect(links).toContain('link set dev vabc type bridge_slave isolated on learning off flood off mcast_flood off');
    expect(links).toContain('neigh replace 198.19.2.2 lladdr 02:53:c6:13:02:02 dev sb nud permanent');
    // Up last, once it is an isolated port that neither learns nor is flooded.
    expect(links.at(-1)).toBe('link set vabc up');
    expect(attach.fdb).toBe('fdb replace 02:53:c6:13:02:02 dev vabc master static\n');
    // The build's program does what the three commands do, from its arguments alone.
    expect(portPlugArgv('/k/port-plug', '/run/netns/h', { ...facts, peer: 'pabc', alias: 'sandbox-kit ns 198.19.2.2' }, 'sb')).toEqual([
      '/k/port-plug',
      '/run/netns/h',
      L2_GUARD.table,
      L2_GUARD.ports,
      L2_GUARD.bound,
      'sb',
      'vabc',
      'pabc',
      '02:53:c6:13:02:02',
      '198.19.2.2',
      'sandbox-kit ns 198.19.2.2',
    ]);
    const detach = detachPortScript('vabc', [{ mac: '02:53:c6:13:02:02', address: '198.19.2.2' }], 'sb');
    expect(detach).toContain('ip neigh del 198.19.2.2 dev sb');
    // The port goes before its rules: no moment where it is there unguarded.
    expect(detach.indexOf('ip link del vabc')).toBeLessThan(detach.indexOf('delete element'));
  });

  it('unbinds a port whether or not it is bound: each element added, then deleted, in one transaction', () => {
    const lines = portUnguardRules('vabc', [{ mac: '02:53:c6:13:02:02', address: '198.19.2.2' }])
      .trim()
      .split('\n');
    expect(lines.map((l) => l.split(' ')[0])).toEqual(['add', 'add', 'delete', 'delete']);
    expect(lines[3]).toBe(`delete element bridge ${L2_GUARD.table} bound { "vabc" . 02:53:c6:13:02:02 . 198.19.2.2 }`);
    // Its MAC and address unknown: its name alone.
    expect(portUnguardRules('vabc', []).trim().split('\n')).toEqual([
      `add element bridge ${L2_GUARD.table} ports { "vabc" }`,
      `delete element bridge ${L2_GUARD.table} ports { "vabc" }`,
    ]);
  });

  it("reads a port's MAC and address from the guard's set", () => {
    const listing = JSON.stringify({
      nftables: [
        { metainfo: { version: '1.0.6' } },
        {
          set: {
            name: L2_GUARD.bound,
            elem: [{ concat: ['vabc', '02:53:c6:13:02:02', '198.19.2.2'] }, { concat: ['vdef', '02:53:c6:13:02:03', '198.19.2.3'] }],
          },
        },
      ],
    });
    expect(boundOf(listing, 'vdef')).toEqual([{ mac: '02:53:c6:13:02:03', address: '198.19.2.3' }]);
    expect(boundOf(listing, 'vxyz')).toEqual([]);
    expect(boundOf('{}', 'vabc')).toEqual([]);
  });

  it('reads the IPv4 resolvers of a resolv.conf', () => {
    expect(nameserversOf('search x\nnameserver 10.0.0.2\n# nameserver 1.1.1.1\nnameserver ::1\nnameserver 9.9.9.9 \n')).toEqual([
      '10.0.0.2',
      '9.9.9.9',
    ]);
  });
});
