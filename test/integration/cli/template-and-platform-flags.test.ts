import { runEntry } from '../../helpers/node-script';
import { CLI_SOURCE } from '../../helpers/cli';

test('bad flags are all reported with what each accepts, and exit 2', async () => {
  const result = await runEntry(CLI_SOURCE, {
    args: ['template', 'build', '--mode', 'tunnel', '--api-url', 'ftp://x', '--alias', 'Bad Name'],
    env: { E2B_API_KEY: '' },
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('--mode: got "tunnel"; expected one of local, transparent');
  expect(result.stderr).toContain('--server-ip: got (missing)');
  expect(result.stderr).toContain('--api-url: got "ftp://x"');
  expect(result.stderr).toContain('--alias: got "Bad Name"');
});

test('without an API key the build is refused before anything is sent, exit 2', async () => {
  const result = await runEntry(CLI_SOURCE, {
    args: ['template', 'build', '--server-ip', '203.0.113.10', '--api-url', 'http://127.0.0.1:9'],
    env: { E2B_API_KEY: '' },
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(
    '--api-key-file: got (missing, and E2B_API_KEY is not set); expected a file holding the platform API key, or E2B_API_KEY',
  );
  expect(result.stderr).toContain('Nothing was built.');
});

test('an unknown subcommand is a usage error', async () => {
  const result = await runEntry(CLI_SOURCE, { args: ['template', 'push'] });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('template: unknown subcommand "push"; expected build');
});

test('--template mcp-gateway takes no proxy flags, names unknown catalog servers, and needs the API key like the proxy', async () => {
  const proxyFlag = await runEntry(CLI_SOURCE, {
    args: ['template', 'build', '--template', 'mcp-gateway', '--server-ip', '203.0.113.10', '--mode', 'local'],
    env: { E2B_API_KEY: 'e2b_x' },
  });
  expect(proxyFlag.code).toBe(2);
  expect(proxyFlag.stderr).toContain('--server-ip: got "203.0.113.10"; expected one of');
  expect(proxyFlag.stderr).toContain('--mode: got "local"; expected one of');

  const unknown = await runEntry(CLI_SOURCE, {
    args: [
      'template',
      'build',
      '--template=mcp-gateway',
      '--server',
      'filesystem',
      '--server',
      'filesytem',
      '--server',
      'context7',
      '--api-url',
      'http://127.0.0.1:9',
    ],
    env: { E2B_API_KEY: 'e2b_x' },
  });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/--server: got "filesytem"; expected a catalog server run from npm or an image .*filesystem/);
  // A remote server (its vendor serves it) has nothing to preinstall.
  expect(unknown.stderr).toContain(
    '--server: got "context7"; expected a catalog server run from npm or an image: this one needs nothing installed',
  );
  expect(unknown.stderr).toContain('Nothing was built.');

  const noKey = await runEntry(CLI_SOURCE, { args: ['template', 'build', '--template', 'mcp-gateway'], env: { E2B_API_KEY: '' } });
  expect(noKey.code).toBe(2);
  expect(noKey.stderr).toContain('--api-key-file: got (missing, and E2B_API_KEY is not set)');

  const wrong = await runEntry(CLI_SOURCE, { args: ['template', 'build', '--template', 'mcp', '--server-ip', '203.0.113.10'] });
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('--template: got "mcp"; expected one of proxy, mcp-gateway');
});

test('sandbox-kit platform: the fleet flags go together and need the shared catalog; nothing starts otherwise', async () => {
  const result = await runEntry(CLI_SOURCE, { args: ['platform', '--host-id', 'i-0abc', '--sandbox-subnet', '10.0.1.16/28'] });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('--advertise-url: got (missing); expected with the other fleet flags');
  expect(result.stderr).toContain("--catalog: got memory; expected the fleet's shared redis://HOST:PORT[/DB]");
  const bad = await runEntry(CLI_SOURCE, { args: ['platform', '--host-id', 'bad id!', '--capacity', '0'] });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--host-id: got "bad id!"; expected 1-63 letters');
  expect(bad.stderr).toContain('--capacity: got "0"');
  const limits = await runEntry(CLI_SOURCE, { args: ['platform', '--concurrent-builds', '0', '--build-log-bytes', 'lots'] });
  expect(limits.code).toBe(2);
  expect(limits.stderr).toContain('--concurrent-builds: got "0"; expected an integer from 1 to 64');
  expect(limits.stderr).toContain('--build-log-bytes: got "lots"; expected a size in bytes, an integer from 65536 to 1073741824');
  const pool = await runEntry(CLI_SOURCE, { args: ['platform', '--warm-pool', 'base=65', '--warm-pool', 'base'] });
  expect(pool.code).toBe(2);
  const accepted =
    "expected TEMPLATE=N: a template name (or ID; TEAM/TEMPLATE for a team's own) and how many of its sandboxes to keep started, an integer from 0 to 64";
  expect(pool.stderr).toContain(`--warm-pool: got "base=65"; ${accepted}`);
  expect(pool.stderr).toContain(`--warm-pool: got "base"; ${accepted}`);
});

test("sandbox-kit platform: the stack's proxy templates and proxy go together, the proxy as IPV4:PORT; nothing starts otherwise", async () => {
  const alone = await runEntry(CLI_SOURCE, { args: ['platform', '--stack-egress-template', 'sandbox-kit-proxy'] });
  expect(alone.code).toBe(2);
  expect(alone.stderr).toContain(
    "--stack-egress-proxy: got (missing); expected with --stack-egress-template, the stack's proxy as IPV4:PORT",
  );
  const orphan = await runEntry(CLI_SOURCE, { args: ['platform', '--stack-egress-proxy', '203.0.113.10:8388'] });
  expect(orphan.code).toBe(2);
  expect(orphan.stderr).toContain('--stack-egress-template: got (missing); expected with --stack-egress-proxy');
  const bad = await runEntry(CLI_SOURCE, {
    args: [
      'platform',
      '--stack-egress-template',
      'p',
      '--stack-egress-proxy',
      'proxy.example.com:8388',
      '--stack-egress-proxy',
      '203.0.113.10:0',
    ],
  });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain(`--stack-egress-proxy: got "proxy.example.com:8388"; expected the stack's proxy as IPV4:PORT`);
  expect(bad.stderr).toContain(`got "203.0.113.10:0"`);
});

test('--template code-interpreter-v1 takes neither proxy nor mcp flags, and needs the API key', async () => {
  const foreign = await runEntry(CLI_SOURCE, {
    args: ['template', 'build', '--template', 'code-interpreter-v1', '--server', 'filesystem', '--server-ip', '203.0.113.10'],
    env: { E2B_API_KEY: 'e2b_x' },
  });
  expect(foreign.code).toBe(2);
  expect(foreign.stderr).toContain('--server: got "filesystem"; expected one of');
  expect(foreign.stderr).toContain('--server-ip: got "203.0.113.10"; expected one of');

  const keyless = await runEntry(CLI_SOURCE, {
    args: ['template', 'build', '--template=code-interpreter-v1', '--api-url', 'http://127.0.0.1:9'],
    env: { E2B_API_KEY: '' },
  });
  expect(keyless.code).toBe(2);
  expect(keyless.stderr).toContain('--api-key-file: got (missing, and E2B_API_KEY is not set)');
  expect(keyless.stderr).toContain('Nothing was built.');
});
