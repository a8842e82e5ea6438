import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { build } from 'esbuild';
import { freePort } from '../../helpers/free-port';
import { connect, ECHO_SERVER, freshFetch, REPO, tempDir, text, waitFor } from './helpers/common';

/** The launcher as the sandbox runs it: the esbuild bundle, started by `mcp-gateway --config JSON`. */
describe('mcp-gateway --config: validate, daemonize, wait, report; secrets stay out of argv and logs', () => {
  const root = tempDir('sk-mcp-launch');
  const bundle = path.join(root, 'mcp-gateway.js');
  const tokenFile = path.join(root, 'etc', '.token');
  const stateDir = path.join(root, 'state');
  const catalogFile = path.join(root, 'catalog.json');
  const token = `tok-${Math.random().toString(36).slice(2)}`;
  const API_KEY = `ak-${Math.random().toString(36).slice(2)}-secret`;
  const DB_PASSWORD = `pw-${Math.random().toString(36).slice(2)}-secret`;
  const ENV_SECRET = `env-${Math.random().toString(36).slice(2)}-secret`;
  let port: number;
  let daemonPid: number | undefined;
  let client: Client | undefined;

  function run(args: string[], env: Record<string, string> = {}) {
    return spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  }

  beforeAll(async () => {
    await build({
      entryPoints: [path.join(REPO, 'src/mcp/gateway/main.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      outfile: bundle,
      logLevel: 'warning',
    });
    fs.writeFileSync(
      catalogFile,
      JSON.stringify({
        secretEcho: {
          description: 'The echo fixture, configured with secrets.',
          run: { command: [process.execPath, ECHO_SERVER] },
          configFile: { env: 'ECHO_CONFIG_FILE' },
          properties: {
            apiKey: { type: 'string', required: true, secret: true, via: { kind: 'env', name: 'ECHO_API_KEY' } },
            dbPassword: { type: 'string', required: true, secret: true, via: { kind: 'file', key: 'password' } },
            mode: { type: 'string', required: false, via: { kind: 'flag', flag: '--mode' } },
          },
        },
      }),
    );
    port = await freePort();
  });

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    if (daemonPid !== undefined) {
      try {
        process.kill(-daemonPid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('an invalid config exits 2 naming every problem, and starts nothing', () => {
    const result = run(
      [
        '--config',
        JSON.stringify({ filesystem: {}, memroy: {} }),
        '--token-file',
        tokenFile,
        '--state-dir',
        stateDir,
        '--port',
        String(port),
      ],
      { GATEWAY_ACCESS_TOKEN: token },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('mcp.filesystem.paths: got (missing); expected a list of strings (required)');
    expect(result.stderr).toContain('did you mean memory?');
    expect(fs.existsSync(tokenFile)).toBe(false);
  });

  test('a valid config: exits 0 once serving, token file 0600, servers reachable with the token', async () => {
    const config = {
      memory: { memoryFilePath: path.join(root, 'memory.jsonl') },
      secretEcho: { apiKey: API_KEY, dbPassword: DB_PASSWORD, mode: 'plain' },
      custom: { envEcho: { runCmd: `'${process.execPath}' '${ECHO_SERVER}'`, envs: { ECHO_API_KEY: ENV_SECRET } } },
    };
    const args = [
      '--config',
      JSON.stringify(config),
      '--token-file',
      tokenFile,
      '--state-dir',
      stateDir,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--servers-dir',
      REPO,
      '--catalog',
      catalogFile,
    ];
    const result = run(args, { GATEWAY_ACCESS_TOKEN: token });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/serving memory \(\d+ tools\), secretEcho \(3 tools\), envEcho \(3 tools\)/);
    daemonPid = Number(/\(pid (\d+),/.exec(result.stdout)?.[1]);
    expect(fs.readFileSync(tokenFile, 'utf8')).toBe(token);
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);

    client = await connect(`http://127.0.0.1:${port}/mcp`, token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['memory__read_graph', 'secretEcho__whoami', 'envEcho__whoami']));
  });

  test('secrets reach the servers by env and a 0600 file, and never any process argv, log or status answer', async () => {
    if (client === undefined) throw new Error('the gateway did not start');
    const report = JSON.parse(text(await client.callTool({ name: 'secretEcho__whoami', arguments: {} })));
    expect(report.apiKey).toBe(API_KEY);
    expect(report.config).toEqual({ password: DB_PASSWORD });
    expect(report.configMode).toBe('600');
    expect(report.argv).toEqual(['--mode', 'plain']);
    const custom = JSON.parse(text(await client.callTool({ name: 'envEcho__whoami', arguments: {} })));
    expect(custom.apiKey).toBe(ENV_SECRET);

    const pids = [daemonPid!, report.pid, custom.pid];
    // The gateway's direct children: every server process (and the shell of the custom one).
    const children = fs.readFileSync(`/proc/${daemonPid}/task/${daemonPid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    for (const pid of [...pids, ...children]) {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      for (const secret of [API_KEY, DB_PASSWORD, ENV_SECRET, token]) expect(cmdline).not.toContain(secret);
    }
    const log = fs.readFileSync(path.join(stateDir, 'gateway.log'), 'utf8');
    const status = await (await freshFetch(`http://127.0.0.1:${port}/status`, { headers: { Authorization: `Bearer ${token}` } })).text();
    for (const secret of [API_KEY, DB_PASSWORD, ENV_SECRET, token]) {
      expect(log).not.toContain(secret);
      expect(status).not.toContain(secret);
    }
  });

  test('when every configured server fails, the launcher exits 1 with their stderr (the SDK shows it)', async () => {
    const otherPort = await freePort();
    const config = { custom: { broken: { runCmd: 'echo "broken-server: no credentials" >&2; exit 4' } } };
    const result = run(
      [
        '--config',
        JSON.stringify(config),
        '--token-file',
        path.join(root, 'etc2', '.token'),
        '--state-dir',
        path.join(root, 'state2'),
        '--port',
        String(otherPort),
        '--host',
        '127.0.0.1',
      ],
      { GATEWAY_ACCESS_TOKEN: token },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('server broken failed');
    expect(result.stderr).toContain('broken-server: no credentials');
    // The useless daemon is gone: the port is free for a corrected retry.
    await waitFor(
      'the daemon to stop',
      () =>
        freshFetch(`http://127.0.0.1:${otherPort}/health`).then(
          () => undefined,
          () => true,
        ),
      10_000,
    );
  });

  test('mcp-gateway status reports every server', () => {
    const result = run(['status', '--token-file', tokenFile, '--port', String(port)]);
    expect(result.status).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status.servers.map((s: { name: string; state: string }) => `${s.name}:${s.state}`)).toEqual([
      'memory:ready',
      'secretEcho:ready',
      'envEcho:ready',
    ]);
  });

  test('mcp-gateway restart: a daemon killed (as a pause to disk kills it) runs again with its config and token; one that runs or was stopped is left alone', async () => {
    // A failed launch left nothing to restart.
    expect(fs.existsSync(path.join(root, 'state2', 'daemon.json'))).toBe(false);
    const restart = () => run(['restart', '--state-dir', stateDir]);
    const running = restart();
    expect(running.status).toBe(0);
    expect(running.stdout).toMatch(/a gateway answers on port \d+: nothing to restart/);

    await client?.close();
    client = undefined;
    process.kill(-daemonPid!, 'SIGKILL');
    await waitFor(
      'the port to be free',
      () =>
        freshFetch(`http://127.0.0.1:${port}/health`).then(
          () => undefined,
          () => true,
        ),
      10_000,
    );
    const again = restart();
    expect(again.stderr).toBe('');
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/serving memory \(\d+ tools\), secretEcho \(3 tools\), envEcho \(3 tools\)/);
    daemonPid = Number(/\(pid (\d+),/.exec(again.stdout)?.[1]);
    // The same token, the same secrets reach the servers (the config came from its 0600 file, not the argv).
    client = await connect(`http://127.0.0.1:${port}/mcp`, token);
    expect(JSON.parse(text(await client.callTool({ name: 'secretEcho__whoami', arguments: {} }))).apiKey).toBe(API_KEY);
    for (const secret of [API_KEY, DB_PASSWORD, token]) expect(fs.readFileSync(`/proc/${daemonPid}/cmdline`, 'utf8')).not.toContain(secret);

    // Stopped on purpose: nothing to start again.
    await client.close();
    client = undefined;
    process.kill(-daemonPid, 'SIGTERM');
    await waitFor(
      'the daemon to stop',
      () =>
        freshFetch(`http://127.0.0.1:${port}/health`).then(
          () => undefined,
          () => true,
        ),
      10_000,
    );
    daemonPid = undefined;
    const stopped = restart();
    expect(stopped.status).toBe(0);
    expect(stopped.stdout).toMatch(/nothing to restart/);
    await expect(freshFetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });
});
