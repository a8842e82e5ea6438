import { attachPolicyScript, needsRelay, policyRestore, policyScript } from '../../../src/runtime/network/egress-policy';
import { GUARD_CHAINS, guardScript, RELAY_PORT } from '../../../src/runtime/network/guard-rules';

describe('egress policy rules', () => {
  it('load a fresh attachment with its jumps in one iptables-restore, and nothing for no policy', () => {
    const script = attachPolicyScript('vabc', '198.19.2.2', { allowOut: ['1.1.1.1/32'], denyOut: ['0.0.0.0/0'] });
    expect(script.match(/iptables/g)).toHaveLength(1);
    expect(script).toContain(`-A ${GUARD_CHAINS.policy} -s 198.19.2.2/32 -j SKIT-P-vabc`);
    expect(script).toContain(`-A ${GUARD_CHAINS.redirect} -s 198.19.2.2/32 -j SKIT-R-vabc`);
    expect(script.indexOf('-d 1.1.1.1/32 -j RETURN')).toBeLessThan(script.indexOf('-d 0.0.0.0/0 -j REJECT'));
    expect(script).not.toContain('REDIRECT --to-ports');
    expect(attachPolicyScript('vabc', '198.19.2.2', undefined)).toBe('');
  });

  it("redirect the sandbox's TCP to the relay for a domain rule or a proxy, never for the stack's proxy", () => {
    const domains = { allowOut: [], denyOut: ['0.0.0.0/0'], allowDomains: ['example.com'] };
    expect(needsRelay(domains)).toBe(true);
    expect(policyRestore('vabc', '198.19.2.2', domains, false)).toContain(
      `-A SKIT-R-vabc -p tcp -d 0.0.0.0/0 -j REDIRECT --to-ports ${RELAY_PORT}`,
    );
    // Only TCP to a denied address can need a name: an allowed address, or one no rule denies, goes out directly.
    const some = policyRestore(
      'vabc',
      '198.19.2.2',
      { allowOut: ['1.1.1.1/32'], denyOut: ['1.1.1.0/24'], allowDomains: ['example.com'] },
      false,
    );
    const nat = some
      .slice(some.indexOf('*nat'))
      .split('\n')
      .filter((l) => l.startsWith('-A SKIT-R-vabc'));
    expect(nat).toEqual([
      '-A SKIT-R-vabc -d 1.1.1.1/32 -j RETURN',
      `-A SKIT-R-vabc -p tcp -d 1.1.1.0/24 -j REDIRECT --to-ports ${RELAY_PORT}`,
    ]);
    const proxied = { allowOut: ['1.1.1.1/32'], denyOut: [], proxy: { host: 'p.example.com', port: 1080 } };
    expect(needsRelay(proxied)).toBe(true);
    // Through a proxy everything goes to the relay, the allowed address too.
    expect(policyRestore('vabc', '198.19.2.2', proxied, false)).toContain(`-A SKIT-R-vabc -p tcp -j REDIRECT --to-ports ${RELAY_PORT}`);
    expect(policyRestore('vabc', '198.19.2.2', proxied, false)).not.toContain('-A SKIT-R-vabc -d 1.1.1.1/32 -j RETURN');
    const pinned = {
      allowOut: ['1.1.1.1/32'],
      denyOut: [],
      allowDomains: ['example.com'],
      onlyTo: [{ address: '203.0.113.10', port: 8388 }],
    };
    expect(needsRelay(pinned)).toBe(false);
    const rules = policyRestore('vabc', '198.19.2.2', pinned, false);
    expect(rules).toContain('-A SKIT-P-vabc -d 203.0.113.10/32 -p tcp --dport 8388 -j RETURN');
    expect(rules).toContain('-A SKIT-P-vabc -d 203.0.113.10/32 -p udp --dport 8388 -j RETURN');
    expect(rules).not.toContain('1.1.1.1');
    expect(
      rules
        .split('\n')
        .filter((l) => l.startsWith('-A SKIT-P-vabc'))
        .at(-1),
    ).toContain('REJECT');
  });

  it('replace an update in one transaction and remove both chains for none', () => {
    const update = policyScript('vabc', '198.19.2.2', { allowOut: [], denyOut: ['8.8.8.8/32'] });
    expect(update).toContain('iptables -w -t nat -C SKIT-REDIRECT -s 198.19.2.2/32 -j SKIT-R-vabc');
    const clear = policyScript('vabc', '198.19.2.2', undefined);
    expect(clear).toContain('iptables -w -t nat -X SKIT-R-vabc');
    expect(clear).toContain('iptables -w -X SKIT-P-vabc');
    // Only where the chain is: a port that never had a policy is not searched for its jumps.
    expect(clear.indexOf('if iptables -w -n -L SKIT-P-vabc')).toBeLessThan(clear.indexOf('iptables -w -D SKIT-POLICY -s 198.19.2.2/32'));
  });

  it("open the relay's port to redirected connections only, and never redirect DNS to the resolvers", () => {
    const guard = guardScript({ bridge: 'sb', rootLink: 'host0', dnsResolvers: ['10.0.0.2'], blocked: [] }).split('\n');
    const accept = guard.findIndex((l) => l.includes(`--dport ${RELAY_PORT} -m conntrack --ctstate DNAT -j ACCEPT`));
    expect(accept).toBeGreaterThan(-1);
    expect(accept).toBeLessThan(guard.indexOf(`-A ${GUARD_CHAINS.input} -i sb -j DROP`));
    expect(guard.indexOf(`-A ${GUARD_CHAINS.input} -p tcp --dport ${RELAY_PORT} -j DROP`)).toBe(accept + 1);
    expect(guard.indexOf(`-A ${GUARD_CHAINS.prerouting} -i sb -d 10.0.0.2/32 -p tcp --dport 53 -j RETURN`)).toBeLessThan(
      guard.indexOf(`-A ${GUARD_CHAINS.prerouting} -i sb -j ${GUARD_CHAINS.redirect}`),
    );
  });
});
