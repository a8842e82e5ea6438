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
    const r = newSandboxSchema.safeParse({ templateID: 'x', iam: { role: 'x' } });
    expect(r.success).toBe(false);
    const messages = r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(messages).toEqual(['iam: IAM tokens are not supported by this platform; leave them out']);
  });

  it('takes transform rules canonical (keys lower-cased), and names each bad key and header', () => {
    const ok = newSandboxSchema.parse({
      templateID: 'x',
      network: { rules: { 'API.Example.com': [{ transform: { headers: { Authorization: 'Bearer x' } } }, {}], '*.example.org': [] } },
    });
    expect(ok.network?.rules).toEqual({
      'api.example.com': [{ transform: { headers: { Authorization: 'Bearer x' } } }, {}],
      '*.example.org': [],
    });
    const r = newSandboxSchema.safeParse({
      templateID: 'x',
      network: {
        rules: {
          '*': [],
          'a.example.com': [{ transform: { headers: { 'Content-Length': '1', 'bad name': 'x', ok: 'a\nb' } } }],
          'A.example.com': [],
        },
      },
    });
    const messages = r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(messages).toEqual([
      expect.stringMatching(/^network\.rules\.a\.example\.com\.0\.transform\.headers\.ok: expected a header value/),
      'network.rules.a.example.com.0.transform.headers.Content-Length: Content-Length frames the request and is not set by a transform',
      'network.rules.a.example.com.0.transform.headers.bad name: expected a header name (an HTTP token)',
      expect.stringMatching(/^network\.rules\.\*: expected a domain name/),
      'network.rules.A.example.com: the same host as "a.example.com"',
    ]);
  });

  it('takes egress rules as the SDK sends them, canonical, and names each bad entry', () => {
    const ok = newSandboxSchema.parse({
      templateID: 'x',
      allow_internet_access: false,
      network: { allowOut: ['1.1.1.1', '8.8.8.9/24', 'API.Example.com', '*.example.org'], denyOut: ['0.0.0.0/0'] },
    });
    expect(ok.network).toEqual({ allowOut: ['1.1.1.1/32', '8.8.8.0/24', 'api.example.com', '*.example.org'], denyOut: ['0.0.0.0/0'] });
    expect(egressPolicyOf({ ...ok.network, allowInternetAccess: ok.allow_internet_access })).toEqual({
      allowOut: ['1.1.1.1/32', '8.8.8.0/24'],
      allowDomains: ['api.example.com', '*.example.org'],
      denyOut: ['0.0.0.0/0'],
    });
    expect(egressPolicyOf({ allowInternetAccess: false })).toEqual({ allowOut: [], denyOut: ['0.0.0.0/0'] });
    expect(egressPolicyOf({ allowInternetAccess: true })).toBeUndefined();
    const bad = newSandboxSchema.safeParse({
      templateID: 'x',
      network: { allowOut: ['1.1.1.1', '300.1.1.1', 'exa_mple.com', '*'], denyOut: ['10.0.0.0/33', 'example.com'] },
    });
    const messages = bad.success ? [] : bad.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(messages).toEqual([
      expect.stringMatching(/^network\.allowOut\.1: expected an IPv4 address or CIDR .* or a domain name/),
      expect.stringMatching(/^network\.allowOut\.2: expected an IPv4 address or CIDR .* or a domain name/),
      expect.stringMatching(/^network\.allowOut\.3: expected an IPv4 address or CIDR .* or a domain name/),
      expect.stringMatching(/^network\.denyOut\.0: expected an IPv4 address or CIDR/),
      'network.denyOut.1: domain names are not supported for deny rules; deny addresses or CIDRs',
    ]);
    expect(networkUpdateSchema.safeParse({ denyOut: ['0.0.0.0/0'], allowOut: ['1.1.1.1'] }).success).toBe(true);
    expect(networkUpdateSchema.safeParse({ allowPublicTraffic: false }).success).toBe(false);
  });

  it('takes an egress proxy as the SDK sends it, and names what is wrong with a bad one', () => {
    const ok = newSandboxSchema.parse({
      templateID: 'x',
      network: { egressProxy: { address: 'Proxy.example.com:1080', username: 'u', password: 'p' } },
    });
    expect(egressPolicyOf(ok.network)).toEqual({
      allowOut: [],
      denyOut: [],
      proxy: { host: 'proxy.example.com', port: 1080, username: 'u', password: 'p' },
    });
    expect(newSandboxSchema.parse({ templateID: 'x', network: { egressProxy: null } }).network).toEqual({});
    const problems = (egressProxy: unknown) => {
      const r = networkUpdateSchema.safeParse({ egressProxy });
      return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(problems({ address: 'proxy.example.com' })).toEqual([expect.stringMatching(/^egressProxy\.address: expected host:port/)]);
    expect(problems({ address: '10.1.2.3:1080' })).toEqual([expect.stringMatching(/^egressProxy\.address: 10\.1\.2\.3 is private space/)]);
    expect(problems({ address: 'p.example.com:99999' })).toEqual([expect.stringMatching(/^egressProxy\.address: expected host:port/)]);
    expect(problems({ address: 'p.example.com:1080', password: 'x' })).toEqual(['egressProxy.password: a password needs a username']);
    expect(problems({ address: 'p.example.com:1080', user: 'x' })).toEqual([expect.stringMatching(/^egressProxy: unknown key "user"/)]);
  });

  it("pins a sandbox of the stack's proxy template to the stack's proxy, whatever the lists say", () => {
    const onlyTo = [{ address: '203.0.113.10', port: 8388 }];
    expect(egressPolicyOf({ allowOut: ['1.1.1.1/32'] }, onlyTo)).toEqual({ allowOut: [], denyOut: [], onlyTo });
    expect(egressPolicyOf(undefined, onlyTo)).toEqual({ allowOut: [], denyOut: [], onlyTo });
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

describe('network.httpsPorts and network.maskRequestHost', () => {
  const P = ['$', '{PORT}'].join('');
  const messagesOf = (network: unknown) => {
    const r = newSandboxSchema.safeParse({ templateID: 'x', network });
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('takes the ports each once, ascending, and the mask as written', () => {
    const ok = newSandboxSchema.parse({ templateID: 'x', network: { httpsPorts: [8443, 3000, 8443], maskRequestHost: `localhost:${P}` } });
    expect(ok.network).toEqual({ httpsPorts: [3000, 8443], maskRequestHost: `localhost:${P}` });
  });

  it('names each bad port and a bad mask', () => {
    expect(messagesOf({ httpsPorts: [0, 3000, 70000, 1.5, '443'] })).toEqual([
      'network.httpsPorts.0: expected a port number from 1 to 65535',
      'network.httpsPorts.2: expected a port number from 1 to 65535',
      'network.httpsPorts.3: expected a port number from 1 to 65535',
      'network.httpsPorts.4: expected a port number from 1 to 65535',
    ]);
    expect(messagesOf({ httpsPorts: 443 })).toEqual(['network.httpsPorts: expected a list of ports such as [3000, 8443]']);
    expect(messagesOf({ httpsPorts: Array.from({ length: 65 }, (_, i) => i + 1) })).toEqual(['network.httpsPorts: at most 64 ports']);
    expect(messagesOf({ maskRequestHost: 'a.test\r\nX-Evil: 1' })).toEqual([
      expect.stringMatching(/^network\.maskRequestHost: expected a host name or IPv4 address with an optional :port/),
    ]);
  });
});
