import { parseCatalog } from '../../../src/mcp/catalog/load';
import { parseMcpConfig } from '../../../src/mcp/config/validate';
import { type LaunchPlan, planLaunches } from '../../../src/mcp/launch/plan';

const catalog = parseCatalog(
  {
    filesystem: {
      description: 'Files.',
      run: { npm: { package: '@scope/fs', bin: 'fs-bin', args: ['--stdio'] } },
      properties: { paths: { type: 'string[]', required: true, via: { kind: 'args' } } },
    },
    db: {
      description: 'A database.',
      run: { command: ['db-mcp', 'serve'] },
      configFile: { env: 'DB_CONFIG' },
      properties: {
        host: { type: 'string', required: true, via: { kind: 'flag', flag: '--host' } },
        port: { type: 'string|number', required: false, via: { kind: 'flag', flag: '--port' } },
        readOnly: { type: 'boolean', required: false, via: { kind: 'flag', flag: '--read-only' } },
        schemas: { type: 'string[]', required: false, via: { kind: 'env', name: 'DB_SCHEMAS', separator: ':' } },
        apiKey: { type: 'string', required: true, secret: true, via: { kind: 'env', name: 'DB_API_KEY' } },
        password: { type: 'string', required: true, secret: true, via: { kind: 'file', key: 'password' } },
      },
    },
  },
  'test',
);

const options = { node: '/opt/node', resolveBin: (pkg: string, bin: string) => `/srv/node_modules/${pkg}/${bin}.js`, stateDir: '/run/gw' };

describe('planLaunches', () => {
  const config = parseMcpConfig(
    {
      filesystem: { paths: ['/a', '/b'] },
      db: { host: 'db.local', port: 5432, readOnly: true, schemas: ['x', 'y'], apiKey: 'AK-123', password: 'PW-456' },
      custom: { mine: { runCmd: 'node server.js --x', envs: { TOKEN: 'T-789' } } },
    },
    catalog,
  );
  const plans = planLaunches(config, catalog, options) as LaunchPlan[];

  test('an npm server runs its bin with the gateway node, fixed args, then list items as arguments', () => {
    expect(plans[0]).toMatchObject({
      name: 'filesystem',
      command: '/opt/node',
      args: ['/srv/node_modules/@scope/fs/fs-bin.js', '--stdio', '/a', '/b'],
      cwd: '/run/gw/servers/filesystem',
    });
  });

  test('flags, env (with its separator) and the 0600 config file each carry their properties', () => {
    expect(plans[1].command).toBe('db-mcp');
    expect(plans[1].args).toEqual(['serve', '--host', 'db.local', '--port', '5432', '--read-only']);
    expect(plans[1].env).toEqual({ DB_SCHEMAS: 'x:y', DB_API_KEY: 'AK-123', DB_CONFIG: '/run/gw/servers/db/config.json' });
    expect(plans[1].files).toEqual([{ path: '/run/gw/servers/db/config.json', content: '{\n  "password": "PW-456"\n}\n' }]);
  });

  test('secrets never appear in any argv', () => {
    const argv = plans.flatMap((p) => [p.command, ...p.args]).join(' ');
    for (const secret of ['AK-123', 'PW-456', 'T-789']) expect(argv).not.toContain(secret);
  });

  test('a custom server runs its command in a shell with its envs', () => {
    expect(plans[2]).toMatchObject({ name: 'mine', command: '/bin/sh', args: ['-c', 'node server.js --x'], env: { TOKEN: 'T-789' } });
  });

  test('a package that cannot be resolved becomes a reported failure, not a thrown error', () => {
    const failing = planLaunches(config, catalog, {
      ...options,
      resolveBin: () => {
        throw new Error('package @scope/fs is not installed');
      },
    });
    expect(failing[0]).toEqual({ name: 'filesystem', error: 'package @scope/fs is not installed' });
    expect((failing[1] as LaunchPlan).command).toBe('db-mcp');
  });
});
