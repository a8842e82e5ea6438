import { builtinCatalog, parseCatalog } from '../../../src/mcp/catalog/load';
import { formatMcpIssues, McpConfigError, parseMcpConfig, validateMcpConfig } from '../../../src/mcp/config/validate';

function issuesOf(input: unknown) {
  const result = validateMcpConfig(input);
  if (result.ok) throw new Error('expected the config to be refused');
  return result.issues;
}

describe('validateMcpConfig against the built-in catalog', () => {
  test('accepts the reference servers and custom ones, resolving aliases', () => {
    const result = validateMcpConfig({
      filesystem: { paths: ['/home/user'] },
      memory: {},
      everything: {},
      sequentialthinking: { disableThoughtLogging: true },
      custom: { 'my-tool': { runCmd: 'node server.js', installCmd: 'npm ci', envs: { TOKEN: 'x' } } },
    });
    expect(result).toEqual({
      ok: true,
      config: {
        servers: { filesystem: { paths: ['/home/user'] }, memory: {}, everything: {}, sequentialThinking: { disableThoughtLogging: true } },
        custom: { 'my-tool': { runCmd: 'node server.js', installCmd: 'npm ci', envs: { TOKEN: 'x' } } },
      },
    });
  });

  test('an unknown server is named, with the nearest catalog name', () => {
    expect(issuesOf({ filesytem: { paths: ['/'] } })).toEqual([
      {
        key: 'mcp.filesytem',
        server: 'filesytem',
        given: '{"paths":["/"]}',
        expected: expect.stringContaining('did you mean filesystem?'),
      },
    ]);
  });

  test('an unknown key is named with the server and its known properties', () => {
    expect(issuesOf({ filesystem: { paths: ['/'], path: '/x' } })).toEqual([
      {
        key: 'mcp.filesystem.path',
        server: 'filesystem',
        given: '"/x"',
        expected: 'no such property (did you mean paths? properties of filesystem: paths)',
      },
    ]);
    expect(issuesOf({ memory: { paths: ['/'] } })[0].expected).toContain('properties of memory: memoryFilePath');
    expect(issuesOf({ everything: { debug: true } })[0].expected).toContain('everything takes no properties');
  });

  test('a wrong type says what was given and what is expected', () => {
    expect(issuesOf({ filesystem: { paths: '/home/user' } })).toEqual([
      { key: 'mcp.filesystem.paths', server: 'filesystem', given: '"/home/user"', expected: 'a list of strings' },
    ]);
    expect(issuesOf({ filesystem: { paths: ['/a', 3] } })).toEqual([
      { key: 'mcp.filesystem.paths[1]', server: 'filesystem', given: '3', expected: 'a string' },
    ]);
    expect(issuesOf({ sequentialThinking: { disableThoughtLogging: 'yes' } })[0]).toMatchObject({
      key: 'mcp.sequentialThinking.disableThoughtLogging',
      expected: 'true or false',
    });
  });

  test('a missing required key is named', () => {
    expect(issuesOf({ filesystem: {} })).toEqual([
      { key: 'mcp.filesystem.paths', server: 'filesystem', given: '(missing)', expected: 'a list of strings (required)' },
    ]);
  });

  test('every problem is reported at once, across servers and custom entries', () => {
    const issues = issuesOf({
      filesystem: {},
      memory: { memoryFilePath: 7 },
      nosuch: {},
      custom: { ok: { runCmd: 'x' }, bad: { install: 'x' }, no__pe: { runCmd: 'x' } },
    });
    expect(issues.map((i) => i.key)).toEqual([
      'mcp.filesystem.paths',
      'mcp.memory.memoryFilePath',
      'mcp.nosuch',
      'mcp.custom.bad.runCmd',
      'mcp.custom.bad.install',
      'mcp.custom.no__pe',
    ]);
    const message = new McpConfigError(issues).message;
    expect(message).toContain('invalid mcp config (6 problems)');
    expect(message).toContain('mcp.memory.memoryFilePath: got 7; expected a string');
    expect(formatMcpIssues(issues).split('\n')).toHaveLength(7);
  });

  test('custom env values and secret properties are never echoed', () => {
    const catalog = {
      ...builtinCatalog(),
      ...parseCatalog(
        {
          vault: {
            description: 'x',
            run: { command: ['vault-mcp'] },
            properties: { token: { type: 'string', required: true, secret: true, via: { kind: 'env', name: 'VAULT_TOKEN' } } },
          },
        },
        'test',
      ),
    };
    const result = validateMcpConfig({ vault: { token: 12345678 }, custom: { c: { runCmd: 'x', envs: { API_KEY: 987654321 } } } }, catalog);
    expect(result.ok).toBe(false);
    const text = JSON.stringify(result);
    expect(text).not.toContain('12345678');
    expect(text).not.toContain('987654321');
    expect(text).toContain('(secret, not shown)');
  });

  test('the config itself must be a mapping; a server named twice through an alias is refused', () => {
    expect(issuesOf(['filesystem'])).toEqual([
      { key: 'mcp', given: '["filesystem"]', expected: 'a mapping of server names to their settings' },
    ]);
    expect(issuesOf({ sequentialThinking: {}, sequentialthinking: {} })[0].expected).toContain('only once');
  });

  test('E2B-style github/ keys get a pointer to custom', () => {
    expect(issuesOf({ 'github/acme/tool': { runCmd: 'x' } })[0].expected).toContain('put the server under custom');
  });

  test('parseMcpConfig throws the same issues', () => {
    expect(() => parseMcpConfig({ filesystem: {} })).toThrow(
      /mcp\.filesystem\.paths: got \(missing\); expected a list of strings \(required\)/,
    );
  });
});
