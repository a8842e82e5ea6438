import { canonicalDomainRule, matchesDomain } from '../../../../src/runtime/network/domain-names';
import { chooseLookup, conntrackArgs, findOriginalDestination } from '../../../../src/runtime/network/egress-relay/original-destination';
import { needsName, plan, type RelayPolicy } from '../../../../src/runtime/network/egress-relay/relay-policy';
import { connectRequest, greeting, passwordRequest } from '../../../../src/runtime/network/egress-relay/socks5';

const base: RelayPolicy = {
  allowOut: ['203.0.113.2/32'],
  denyOut: ['0.0.0.0/0'],
  allowDomains: ['allowed.example.com', '*.wild.example.com'],
  resolvers: ['10.0.0.53'],
  blocked: ['10.0.0.0/8', '169.254.0.0/16'],
};
const web = { address: '203.0.113.1', port: 443 };

describe('domain rules', () => {
  it('are lower-case names of two labels or more, with an optional leading wildcard', () => {
    expect(canonicalDomainRule('API.Example.COM.')).toBe('api.example.com');
    expect(canonicalDomainRule('*.example.com')).toBe('*.example.com');
    for (const bad of ['*', 'localhost', '1.2.3.4', 'a..b', '-a.com', 'a_b.com', '*.*.com', 'x.example.com/24']) {
      expect(canonicalDomainRule(bad)).toBeUndefined();
    }
  });

  it('match exact names, and subdomains at any depth (not the apex) for a wildcard', () => {
    const rules = ['allowed.example.com', '*.wild.example.com'];
    expect(matchesDomain(rules, 'ALLOWED.example.com')).toBe(true);
    expect(matchesDomain(rules, 'x.allowed.example.com')).toBe(false);
    expect(matchesDomain(rules, 'a.b.wild.example.com')).toBe(true);
    expect(matchesDomain(rules, 'wild.example.com')).toBe(false);
    expect(matchesDomain(rules, 'notwild.example.com')).toBe(false);
  });
});

describe("the relay's decision", () => {
  it('lets an allowed name through to the destination the sandbox chose, checked against the name', () => {
    expect(needsName(base, web)).toBe(true);
    expect(plan(base, web, 'allowed.example.com')).toEqual({
      action: 'connect',
      host: '203.0.113.1',
      port: 443,
      verifyName: 'allowed.example.com',
      byName: 'allowed.example.com',
    });
    expect(plan(base, web, 'x.wild.example.com')).toMatchObject({ action: 'connect', verifyName: 'x.wild.example.com' });
  });

  it('refuses a name not allowed, and no name, where the address is denied', () => {
    expect(plan(base, web, 'other.example.com')).toMatchObject({ action: 'refuse' });
    expect(plan(base, web, undefined)).toMatchObject({ action: 'refuse' });
  });

  it('lets an allowed address through without looking at names (allow beats deny)', () => {
    const allowed = { address: '203.0.113.2', port: 22 };
    expect(needsName(base, allowed)).toBe(false);
    expect(plan(base, allowed, undefined)).toEqual({ action: 'connect', host: '203.0.113.2', port: 22 });
  });

  it('never reaches private space, whatever the name', () => {
    expect(plan(base, { address: '169.254.169.254', port: 80 }, 'allowed.example.com')).toMatchObject({ action: 'refuse' });
    expect(plan({ ...base, allowOut: ['10.0.0.0/8'] }, { address: '10.1.1.1', port: 80 }, undefined)).toMatchObject({ action: 'refuse' });
  });

  it('lets everything not denied through, and sends an allowed name to the proxy by name', () => {
    const open = { ...base, denyOut: [] };
    expect(needsName(open, web)).toBe(false);
    expect(plan(open, web, undefined)).toEqual({ action: 'connect', host: '203.0.113.1', port: 443 });
    const proxied = { ...base, proxy: { host: 'proxy.example.net', port: 1080 } };
    expect(plan(proxied, web, 'Allowed.example.com')).toEqual({
      action: 'connect',
      host: 'allowed.example.com',
      port: 443,
      byName: 'allowed.example.com',
    });
  });
});

describe('the original destination of a redirected connection', () => {
  const table = [
    'ipv4     2 tcp      6 299 ESTABLISHED src=198.19.5.2 dst=203.0.113.9 sport=40000 dport=80 src=203.0.113.9 dst=198.19.5.2 sport=80 dport=40000 [ASSURED] mark=0 zone=0 use=2',
    'ipv4     2 tcp      6 431999 ESTABLISHED src=198.19.5.2 dst=203.0.113.1 sport=40001 dport=443 src=198.19.5.1 dst=198.19.5.2 sport=15001 dport=40001 [ASSURED] mark=0 zone=0 use=2',
    'ipv4     2 udp      17 29 src=198.19.5.2 dst=10.0.0.53 sport=40001 dport=53 src=10.0.0.53 dst=198.19.5.2 sport=53 dport=40001 mark=0 zone=0 use=2',
  ].join('\n');

  it('is read from the entry of that client whose reply comes from the relay', () => {
    expect(findOriginalDestination(table, { address: '198.19.5.2', port: 40001 }, 15001)).toEqual({ address: '203.0.113.1', port: 443 });
    expect(findOriginalDestination(table, { address: '198.19.5.2', port: 40000 }, 15001)).toBeUndefined();
    expect(findOriginalDestination(table, { address: '198.19.5.3', port: 40001 }, 15001)).toBeUndefined();
  });

  it('is read the same from what the conntrack tool lists (netlink), asked for the client only', () => {
    const client = { address: '198.19.5.2', port: 40001 };
    expect(conntrackArgs(client)).toEqual(['-L', '-p', 'tcp', '--orig-src', '198.19.5.2', '--orig-port-src', '40001']);
    const listed =
      'tcp      6 431999 ESTABLISHED src=198.19.5.2 dst=203.0.113.1 sport=40001 dport=443 src=198.19.5.1 dst=198.19.5.2 sport=15001 dport=40001 [ASSURED] mark=0 use=1\n';
    expect(findOriginalDestination(listed, client, 15001)).toEqual({ address: '203.0.113.1', port: 443 });
    // Not redirected to the relay (its reply comes from the destination): no answer, whichever way it was read.
    expect(findOriginalDestination(listed, client, 15002)).toBeUndefined();
    expect(findOriginalDestination('', client, 15001)).toBeUndefined();
  });

  it('is read from procfs while the kernel has the file, else through netlink, unless one way is forced', () => {
    expect(chooseLookup('auto', true)).toBe('procfs');
    expect(chooseLookup('auto', false)).toBe('netlink');
    expect(chooseLookup('netlink', true)).toBe('netlink');
    expect(chooseLookup('procfs', false)).toBe('procfs');
  });
});

describe('SOCKS5 messages', () => {
  it('offer password auth only with a user name, and connect to an address or a name', () => {
    expect([...greeting(false)]).toEqual([5, 1, 0]);
    expect([...greeting(true)]).toEqual([5, 2, 0, 2]);
    expect([...passwordRequest('u', 'pw')]).toEqual([1, 1, 117, 2, 112, 119]);
    expect([...connectRequest('203.0.113.1', 443)]).toEqual([5, 1, 0, 1, 203, 0, 113, 1, 1, 187]);
    expect([...connectRequest('a.io', 80)]).toEqual([5, 1, 0, 3, 4, 97, 46, 105, 111, 0, 80]);
  });
});
