import {
  AEAD_METHODS,
  ConfigError,
  checkPassword,
  formatIssues,
  loadStackConfig,
  parseStackConfig,
  type ConfigIssue,
} from '../../../src/config';

/** Parses a config expected to be invalid and returns its issues. */
function issuesOf(raw: Record<string, unknown>): ConfigIssue[] {
  const result = parseStackConfig(raw);
  if (result.ok) throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
  return result.issues;
}

/** The single issue of a config with one bad value. */
function onlyIssue(raw: Record<string, unknown>): ConfigIssue {
  const issues = issuesOf(raw);
  expect(issues).toHaveLength(1);
  return issues[0];
}

describe('stack config defaults', () => {
  it('are the documented proxy settings when nothing is set', () => {
    const config = loadStackConfig({});
    expect(config.proxy).toEqual({
      listenAddress: '0.0.0.0',
      port: 8388,
      method: 'aes-256-gcm',
      mode: 'tcp_and_udp',
      timeout: 300,
      fastOpen: true,
      blockedCidrs: [],
    });
    expect(config.client).toEqual({ localAddress: '0.0.0.0', localPort: 1080, redirectPort: 12345, mode: 'tcp_only', bypassCidrs: [] });
    expect(config.template).toMatchObject({ memoryMB: 1024, cpuCount: 1 });
    expect(typeof config.template.alias).toBe('string');
    expect(config.agent.port).toBe(49983);
    expect(config.brand).toBe('Svc');
  });

  it('fill in the keys a section leaves out', () => {
    const config = loadStackConfig({ proxy: { port: 9000 } });
    expect(config.proxy.port).toBe(9000);
    expect(config.proxy.method).toBe('aes-256-gcm');
  });
});

describe('accepted values', () => {
  it('takes numbers and booleans as strings, the way `pulumi config set` stores them', () => {
    const config = loadStackConfig({ proxy: { port: '9000', timeout: '60', fastOpen: 'false' }, template: { memoryMB: '2048' } });
    expect(config.proxy).toMatchObject({ port: 9000, timeout: 60, fastOpen: false });
    expect(config.template.memoryMB).toBe(2048);
  });

  it('accepts the client mode tcp as an alias of tcp_only', () => {
    expect(loadStackConfig({ client: { mode: 'tcp' } }).client.mode).toBe('tcp_only');
    expect(loadStackConfig({ client: { mode: 'tcp_and_udp' } }).client.mode).toBe('tcp_and_udp');
  });

  it('accepts every AEAD method and refuses stream ciphers', () => {
    for (const method of AEAD_METHODS) expect(loadStackConfig({ proxy: { method } }).proxy.method).toBe(method);
    for (const method of ['rc4-md5', 'aes-256-cfb', 'aes-128-ctr', 'chacha20-ietf', 'salsa20', 'bf-cfb', 'table', 'none']) {
      expect(onlyIssue({ proxy: { method } }).key).toBe('sandbox-kit:proxy.method');
    }
  });

  it('ignores the secret key: the password never travels with the plain config', () => {
    const config = loadStackConfig({ proxyPassword: { secure: 'v1:abc' } });
    expect(JSON.stringify(config)).not.toContain('proxyPassword');
  });
});

describe('one clear message per kind of bad value', () => {
  it('wrong type (boolean for a port)', () => {
    expect(onlyIssue({ proxy: { port: true } })).toEqual({
      key: 'sandbox-kit:proxy.port',
      given: 'true',
      expected: 'a TCP/UDP port, an integer from 1 to 65535',
    });
  });

  it('not a number (string for a port), showing the string as written', () => {
    expect(onlyIssue({ proxy: { port: 'eighty' } })).toEqual({
      key: 'sandbox-kit:proxy.port',
      given: '"eighty"',
      expected: 'a TCP/UDP port, an integer from 1 to 65535',
    });
  });

  it('out of range, also when given as a string', () => {
    expect(onlyIssue({ proxy: { port: 70000 } })).toMatchObject({ key: 'sandbox-kit:proxy.port', given: '70000' });
    expect(onlyIssue({ proxy: { port: '0' } })).toMatchObject({ key: 'sandbox-kit:proxy.port', given: '"0"' });
    expect(onlyIssue({ template: { memoryMB: 64 } })).toEqual({
      key: 'sandbox-kit:template.memoryMB',
      given: '64',
      expected: 'memory in MB, an integer from 128 to 65536',
    });
  });

  it('not an integer', () => {
    expect(onlyIssue({ proxy: { timeout: 1.5 } })).toEqual({
      key: 'sandbox-kit:proxy.timeout',
      given: '1.5',
      expected: 'a timeout in seconds, an integer from 1 to 86400',
    });
  });

  it('empty value (a YAML key with nothing after it)', () => {
    expect(onlyIssue({ client: { localPort: null } })).toMatchObject({ key: 'sandbox-kit:client.localPort', given: 'null' });
  });

  it('bad enum value lists what is accepted', () => {
    expect(onlyIssue({ proxy: { mode: 'both' } })).toEqual({
      key: 'sandbox-kit:proxy.mode',
      given: '"both"',
      expected: 'one of tcp_only, udp_only, tcp_and_udp',
    });
    expect(onlyIssue({ client: { mode: 'udp' } }).expected).toBe('one of tcp_only, udp_only, tcp_and_udp, or tcp (alias of tcp_only)');
    expect(onlyIssue({ proxy: { method: 'rc4-md5' } }).expected).toBe(`one of ${AEAD_METHODS.join(', ')}`);
  });

  it('bad boolean', () => {
    expect(onlyIssue({ proxy: { fastOpen: 'yes' } })).toEqual({
      key: 'sandbox-kit:proxy.fastOpen',
      given: '"yes"',
      expected: 'true or false',
    });
  });

  it('unknown key in a section, with a spelling suggestion and the known keys', () => {
    const issue = onlyIssue({ proxy: { prot: 9000 } });
    expect(issue.key).toBe('sandbox-kit:proxy.prot');
    expect(issue.given).toBe('9000');
    expect(issue.expected).toMatch(/^no such setting \(did you mean port\?/);
    expect(issue.expected).toContain('listenAddress, port, method, mode, timeout, fastOpen, blockedCidrs');
  });

  it('unknown top-level key', () => {
    const issue = onlyIssue({ proxi: { port: 1 } });
    expect(issue.key).toBe('sandbox-kit:proxi');
    expect(issue.expected).toMatch(/did you mean proxy\?/);
  });

  it('a flat dotted key, as `pulumi config set` without --path stores it', () => {
    const issue = onlyIssue({ 'proxy.port': '9000' });
    expect(issue.key).toBe('sandbox-kit:proxy.port');
    expect(issue.given).toBe('"9000"');
    expect(issue.expected).toContain("pulumi config set --path 'sandbox-kit:proxy.port' VALUE");
  });

  it('bad CIDR, each list element on its own', () => {
    expect(issuesOf({ client: { bypassCidrs: ['10.0.0.0/8', '10.0.0.0/33', '300.1.1.0/24', 'example.com'] } })).toEqual(
      [1, 2, 3].map((i) => ({
        key: `sandbox-kit:client.bypassCidrs[${i}]`,
        given: JSON.stringify(['10.0.0.0/8', '10.0.0.0/33', '300.1.1.0/24', 'example.com'][i]),
        expected: 'an IPv4 CIDR such as 203.0.113.0/24',
      })),
    );
  });

  it('bad IP address', () => {
    expect(onlyIssue({ client: { localAddress: '1.2.3' } })).toEqual({
      key: 'sandbox-kit:client.localAddress',
      given: '"1.2.3"',
      expected: 'an IPv4 address such as 203.0.113.10',
    });
  });

  it('bad nested type: a scalar where a list is expected', () => {
    expect(onlyIssue({ client: { bypassCidrs: '10.0.0.0/8' } })).toEqual({
      key: 'sandbox-kit:client.bypassCidrs',
      given: '"10.0.0.0/8"',
      expected: 'a list of IPv4 CIDRs such as [198.51.100.0/24]',
    });
  });

  it('a wrong type inside a list', () => {
    expect(onlyIssue({ host: { adminCidrs: [42] } })).toEqual({
      key: 'sandbox-kit:host.adminCidrs[0]',
      given: '42',
      expected: 'an IPv4 CIDR such as 203.0.113.0/24',
    });
  });

  it('an object given a scalar names the keys the section takes', () => {
    expect(onlyIssue({ client: 'transparent' })).toEqual({
      key: 'sandbox-kit:client',
      given: '"transparent"',
      expected: 'a mapping of settings (localAddress, localPort, redirectPort, mode, bypassCidrs)',
    });
    expect(onlyIssue({ proxy: [1, 2] }).expected).toMatch(/^a mapping of settings \(listenAddress, /);
  });

  it('a scalar given an object', () => {
    expect(onlyIssue({ brand: { name: 'Svc' } })).toEqual({
      key: 'sandbox-kit:brand',
      given: '{"name":"Svc"}',
      expected: 'a capitalised word of letters and digits, such as Svc',
    });
  });

  it('bad string format', () => {
    expect(onlyIssue({ host: { sshPublicKey: 'not a key' } })).toMatchObject({
      key: 'sandbox-kit:host.sshPublicKey',
      expected: 'an OpenSSH public key line (ssh-ed25519 AAAA... comment)',
    });
    expect(onlyIssue({ template: { alias: 'My Template' } })).toMatchObject({ key: 'sandbox-kit:template.alias', given: '"My Template"' });
  });

  it('an empty list where at least one entry is needed', () => {
    expect(onlyIssue({ host: { clientCidrs: [] } })).toEqual({
      key: 'sandbox-kit:host.clientCidrs',
      given: '[]',
      expected: 'at least one CIDR (0.0.0.0/0 for anyone)',
    });
  });

  it('shortens long values in messages', () => {
    const issue = onlyIssue({ template: { alias: 'x'.repeat(200) } });
    expect(issue.given.length).toBeLessThanOrEqual(80);
    expect(issue.given.endsWith('...')).toBe(true);
  });
});

describe('reporting', () => {
  it('reports every invalid value at once, across sections', () => {
    const issues = issuesOf({
      proxy: { port: 0, method: 'rc4-md5', prot: 1 },
      client: { mode: 'udp', bypassCidrs: ['x'] },
      template: 'big',
    });
    expect(issues.map((i) => i.key).sort()).toEqual(
      [
        'sandbox-kit:client.bypassCidrs[0]',
        'sandbox-kit:client.mode',
        'sandbox-kit:proxy.method',
        'sandbox-kit:proxy.port',
        'sandbox-kit:proxy.prot',
        'sandbox-kit:template',
      ].sort(),
    );
  });

  it('formats one line per issue: key, value given, what is accepted', () => {
    const text = formatIssues(issuesOf({ proxy: { port: 0, mode: 'x' } }));
    expect(text.split('\n')).toEqual([
      'invalid stack config (2 problems):',
      '  sandbox-kit:proxy.port: got 0; expected a TCP/UDP port, an integer from 1 to 65535',
      '  sandbox-kit:proxy.mode: got "x"; expected one of tcp_only, udp_only, tcp_and_udp',
    ]);
  });

  it('loadStackConfig throws a ConfigError carrying every issue', () => {
    let caught: unknown;
    try {
      loadStackConfig({ proxy: { port: 0 }, agent: { port: -1 } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).issues.map((i) => i.key)).toEqual(['sandbox-kit:proxy.port', 'sandbox-kit:agent.port']);
    expect((caught as ConfigError).message).toContain('2 problems');
  });
});

describe('checkPassword', () => {
  it('accepts 16 or more printable ASCII characters', () => {
    expect(checkPassword('0123456789abcdef', 'ENV')).toEqual([]);
  });

  it('refuses missing, short or non-printable passwords without showing them', () => {
    expect(checkPassword(undefined, 'ENV')).toEqual([{ key: 'ENV', given: '(missing)', expected: expect.stringContaining('16') }]);
    for (const bad of ['short-secret', 'has a space in the middle', 'tab\tinside-the-password']) {
      const issues = checkPassword(bad, 'ENV');
      expect(issues).toHaveLength(1);
      expect(JSON.stringify(issues)).not.toContain(bad);
    }
  });
});
