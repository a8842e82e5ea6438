import { loadStackConfig, parseStackConfig } from '../../../src/config';

function issues(raw: Record<string, unknown>) {
  const result = parseStackConfig(raw);
  return result.ok ? [] : result.issues;
}

describe('sandbox host, fleet and DNS keys', () => {
  it('defaults to one sandbox host, no zone, the API and gateway open to anyone', () => {
    const config = loadStackConfig({});
    expect(config.fleet.hosts).toBe(1);
    expect(config.dns.zoneId).toBeUndefined();
    expect(config.sandboxHost.apiCidrs).toEqual(['0.0.0.0/0']);
    expect(config.sandboxHost.gatewayCidrs).toEqual(['0.0.0.0/0']);
    expect(config.sandboxHost.diskGb).toBe(40);
  });

  it('refuses SSH from the whole internet, or from anything wider than a /8', () => {
    for (const wide of ['0.0.0.0/0', '0.0.0.0/1', '10.0.0.0/7']) {
      expect(issues({ host: { adminCidrs: ['198.51.100.7/32', wide] } })).toEqual([
        {
          key: 'sandbox-kit:host.adminCidrs[1]',
          given: JSON.stringify(wide),
          expected: 'a CIDR no wider than /8: SSH is never open to the whole internet',
        },
      ]);
    }
    expect(issues({ host: { adminCidrs: ['10.0.0.0/8', '198.51.100.7/32'] } })).toEqual([]);
  });

  it('takes a warm pool per template (none by default), each size from 0 to 64, naming the key of a bad one', () => {
    expect(loadStackConfig({}).sandboxHost.warmPool).toEqual({});
    // From `pulumi config set` the sizes arrive as text.
    expect(loadStackConfig({ sandboxHost: { warmPool: { base: '2', 'my-template:v2': 0, 'acme/web': 1 } } }).sandboxHost.warmPool).toEqual({
      base: 2,
      'my-template:v2': 0,
      'acme/web': 1,
    });
    const expected =
      "template names (or IDs), each with how many of its sandboxes to keep started, an integer from 0 to 64, such as {base: 2}; TEAM/TEMPLATE (TEAM a team's name or ID) names that team's own template";
    // One team prefix at most, and both parts are names.
    for (const bad of ['a/b/c', '/web', 'acme/', 'ac me/web'])
      expect(issues({ sandboxHost: { warmPool: { [bad]: 1 } } }).map((i) => i.expected)).toEqual([expected]);
    expect(issues({ sandboxHost: { warmPool: { base: 65, ok: 1, other: -1 } } })).toEqual([
      { key: 'sandbox-kit:sandboxHost.warmPool.base', given: '65', expected },
      { key: 'sandbox-kit:sandboxHost.warmPool.other', given: '-1', expected },
    ]);
    expect(issues({ sandboxHost: { warmPool: ['base'] } }).map((i) => i.key)).toEqual(['sandbox-kit:sandboxHost.warmPool']);
  });

  it('needs at least one API and gateway CIDR', () => {
    expect(issues({ sandboxHost: { apiCidrs: [], gatewayCidrs: [] } }).map((i) => i.key)).toEqual([
      'sandbox-kit:sandboxHost.apiCidrs',
      'sandbox-kit:sandboxHost.gatewayCidrs',
    ]);
  });

  it('needs a real domain with a hosted zone, and says which key to change', () => {
    expect(issues({ dns: { zoneId: 'Z0123456789ABCDEFGHIJ' } })).toEqual([
      {
        key: 'sandbox-kit:gateway.domain',
        given: '(missing)',
        expected: 'the domain of dns.zoneId (a public DNS domain, not the default localhost) when dns.zoneId is set',
      },
    ]);
    expect(issues({ dns: { zoneId: 'Z0123456789ABCDEFGHIJ' }, gateway: { domain: 'sandbox.example.com' } })).toEqual([]);
  });

  it('reports bad fleet sizes and types with what is accepted', () => {
    expect(issues({ fleet: { hosts: 0, redisNodeType: 't3.micro' }, sandboxHost: { diskGb: '8' } })).toEqual([
      { key: 'sandbox-kit:sandboxHost.diskGb', given: '"8"', expected: 'a disk size in GiB, an integer from 20 to 16384' },
      { key: 'sandbox-kit:fleet.hosts', given: '0', expected: 'an integer from 1 to 100' },
      { key: 'sandbox-kit:fleet.redisNodeType', given: '"t3.micro"', expected: 'an ElastiCache node type such as cache.t4g.micro' },
    ]);
  });
});
