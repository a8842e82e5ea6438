import { egressPolicyOf, networkUpdateSchema } from '../../../../src/platform/sandboxes/network-requests';
import { connectSchema, newSandboxSchema, setTimeoutSchema } from '../../../../src/platform/sandboxes/requests';

describe('newSandboxSchema', () => {
  it('fills in E2B defaults', () => {
    expect(newSandboxSchema.parse({ templateID: 'base' })).toEqual({
      templateID: 'base',
      timeout: 300,
      metadata: {},
      envVars: {},
      autoPause: false,
    });
  });

  it('takes what the SDK sends for lifecycle', () => {
    expect(newSandboxSchema.parse({ templateID: 'x', autoPause: true, autoResume: { enabled: true } })).toMatchObject({
      autoPause: true,
      autoResume: { enabled: true },
    });
  });

  it('accepts the empty values clients send by default for unsupported features', () => {
    expect(newSandboxSchema.safeParse({ templateID: 'x', network: {}, volumeMounts: [], allow_internet_access: true }).success).toBe(true);
  });

  it('refuses features it does not provide rather than ignoring them', () => {
    const r = newSandboxSchema.safeParse({
      templateID: 'x',
      network: { egressProxy: { address: 'proxy.example.com:1080' } },
      iam: { role: 'x' },
    });
    expect(r.success).toBe(false);
    const messages = r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(messages).toEqual([
      'network.egressProxy: egress proxies are not supported by this platform; leave them out',
      'iam: IAM tokens are not supported by this platform; leave them out',
    ]);
  });

  it('takes egress rules as the SDK sends them, canonical, and names each bad entry', () => {
    const ok = newSandboxSchema.parse({
      templateID: 'x',
      allow_internet_access: false,
      network: { allowOut: ['1.1.1.1', '8.8.8.9/24'], denyOut: ['0.0.0.0/0'] },
    });
    expect(ok.network).toEqual({ allowOut: ['1.1.1.1/32', '8.8.8.0/24'], denyOut: ['0.0.0.0/0'] });
    expect(egressPolicyOf(ok.network, ok.allow_internet_access)).toEqual({
      allowOut: ['1.1.1.1/32', '8.8.8.0/24'],
      denyOut: ['0.0.0.0/0'],
    });
    expect(egressPolicyOf(undefined, false)).toEqual({ allowOut: [], denyOut: ['0.0.0.0/0'] });
    expect(egressPolicyOf({}, true)).toBeUndefined();
    const bad = newSandboxSchema.safeParse({
      templateID: 'x',
      network: { allowOut: ['1.1.1.1', '300.1.1.1', 'example.com'], denyOut: ['10.0.0.0/33', 'example.com'] },
    });
    const messages = bad.success ? [] : bad.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(messages).toEqual([
      expect.stringMatching(/^network\.allowOut\.1: expected an IPv4 address or CIDR/),
      expect.stringMatching(/^network\.allowOut\.2: domain names in allowOut are not supported/),
      expect.stringMatching(/^network\.denyOut\.0: expected an IPv4 address or CIDR/),
      'network.denyOut.1: domain names are not supported for deny rules; deny addresses or CIDRs',
    ]);
    expect(networkUpdateSchema.safeParse({ denyOut: ['0.0.0.0/0'], allowOut: ['1.1.1.1'] }).success).toBe(true);
    expect(networkUpdateSchema.safeParse({ allowPublicTraffic: false }).success).toBe(false);
  });

  it('takes network.allowPublicTraffic and refuses an unknown network key by name', () => {
    expect(newSandboxSchema.parse({ templateID: 'x', network: { allowPublicTraffic: false } }).network).toEqual({
      allowPublicTraffic: false,
    });
    const r = newSandboxSchema.safeParse({ templateID: 'x', network: { allowPublicTrafic: false } });
    expect(r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      expect.stringMatching(/^network: .*allowPublicTrafic/),
    ]);
  });

  it('refuses timeouts that are not whole seconds from 1 to 86400, and bad env names', () => {
    for (const timeout of [0, -1, 1.5, 86_401, '60']) expect(newSandboxSchema.safeParse({ templateID: 'x', timeout }).success).toBe(false);
    expect(newSandboxSchema.safeParse({ templateID: 'x', timeout: 86_400 }).success).toBe(true);
    expect(newSandboxSchema.safeParse({ templateID: 'x', envVars: { '1BAD': 'v' } }).success).toBe(false);
  });

  it('requires the template', () => {
    expect(newSandboxSchema.safeParse({}).success).toBe(false);
    expect(newSandboxSchema.safeParse({ templateID: '' }).success).toBe(false);
  });
});

describe('connect and timeout bodies', () => {
  it('connect defaults to 300 s; memory is true or false (a reboot from the files), nothing else', () => {
    expect(connectSchema.parse({})).toEqual({ timeout: 300 });
    expect(connectSchema.parse({ memory: false })).toEqual({ timeout: 300, memory: false });
    expect(connectSchema.safeParse({ memory: 'no' }).error?.issues[0]?.message).toBe(
      'expected true (keep memory) or false (only the filesystem)',
    );
  });

  it('setTimeout needs the timeout', () => {
    expect(setTimeoutSchema.safeParse({}).success).toBe(false);
    expect(setTimeoutSchema.parse({ timeout: 5 })).toEqual({ timeout: 5 });
  });
});
