import { attachPortCommands, detachPortScript, GUARD_CHAINS, guardScript, portGuardRules } from '../../../src/runtime/network/guard-rules';
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

  it('binds a port to its MAC and address, IPv4 and ARP only, and plugs it in only after', () => {
    const port = portGuardRules({ port: 'vabc', mac: '02:53:c6:13:02:02', address: '198.19.2.2' });
    expect(port).toContain('-A SKIT-vabc -s ! 02:53:c6:13:02:02 -j DROP');
    expect(port).toContain('-A SKIT-vabc -p ARP --arp-ip-src ! 198.19.2.2 -j DROP');
    expect(port.trim().split('\n').at(-2)).toBe('-A SKIT-vabc -j DROP');
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
    expect(detachPortScript('vabc', '198.19.2.2', 'sb')).toContain('ip neigh del 198.19.2.2 dev sb');
  });

  it('reads the IPv4 resolvers of a resolv.conf', () => {
    expect(nameserversOf('search x\nnameserver 10.0.0.2\n# nameserver 1.1.1.1\nnameserver ::1\nnameserver 9.9.9.9 \n')).toEqual([
      '10.0.0.2',
      '9.9.9.9',
    ]);
  });
});
