/**
 * Everything that uses the lab's host link (its one veth into the root namespace) lives in this file, so jest never
 * runs two host links at once: the lab's host link itself, and `sandbox-kit up`, the whole local system, which puts
 * the gateway in the root namespace in front of agents inside the sandboxes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { hostLinkName, labUp, type Lab } from '../../../src/lab';
import { run } from '../../../src/lab/run';
import { CLI, ROOT, cli, namespacesOf, requireBuilt, uniqueLabName, waitUntil } from '../../helpers/lab';

beforeAll(() => requireBuilt());

describe('host link', () => {
  const name = uniqueLabName('hst');
  let lab: Lab | undefined;

  afterAll(async () => {
    await lab?.down();
    expect(await namespacesOf(name)).toEqual([]);
    expect((await run(['ip', 'link', 'show', 'dev', hostLinkName(name)])).code).not.toBe(0);
  });

  test('with hostLink, the root namespace reaches a service in a sandbox through one veth; down removes it', async () => {
    lab = await labUp({ name, hostLink: true });
    const device = hostLinkName(name);
    expect((await run(['ip', 'link', 'show', 'dev', device])).code).toBe(0);
    const server = lab.spawnIn('sb1', [
      'node',
      '-e',
      'require("http").createServer((q,s)=>s.end(q.socket.remoteAddress+"\\n")).listen(18081,"0.0.0.0")',
    ]);
    try {
      const url = `http://${lab.sandboxAddress('sb1')}:18081/`;
      let answer = '';
      for (let i = 0; i < 50 && answer === ''; i++) {
        const r = await run(['curl', '-sS', '--max-time', '2', url]);
        if (r.code === 0) answer = r.stdout.trim();
        else await new Promise((res) => setTimeout(res, 100));
      }
      expect(answer).toBe(lab.plan.hostLinkRoot);
    } finally {
      server.kill();
    }
    await lab.down();
    lab = undefined;
    expect((await run(['ip', 'link', 'show', 'dev', device])).code).not.toBe(0);
    expect((await run(['ip', 'route', 'show', '198.18.2.0/24'])).stdout.trim()).toBe('');
  });
});

interface Answer {
  status: number;
  body: string;
}

function post(port: number, path: string, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('sandbox-kit up: the whole local system', () => {
  const name = uniqueLabName('up');
  let child: ChildProcess | undefined;
  let output = '';

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await waitUntil('up to stop', () => (child!.exitCode === null ? undefined : true), 30_000).catch(() => undefined);
    }
    await cli(['lab', 'down', '--name', name]);
    expect(await namespacesOf(name)).toEqual([]);
  });

  test('brings up proxy, sandboxes, agents and gateway; requests route to the agents; SIGTERM removes everything', async () => {
    child = spawn(process.execPath, [CLI, 'up', '--name', name, '--gateway-port', '0', '--sandboxes', '2'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    await waitUntil(
      'the ready line',
      () => (/^ready$/m.test(output) ? true : child!.exitCode !== null ? Promise.reject(new Error(output)) : undefined),
      90_000,
    );

    // The egress check it printed is the real one: direct from the sandbox host, proxied from the egress EIP.
    expect(output).toMatch(/\[check\] direct from sb1: 203\.0\.113\.100; through the proxy: (203\.0\.113\.\d+) \(expected \1\) -> ok/);

    const port = Number(/gateway +http:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]);
    const catalogFile = /tokens +(\S+)/.exec(output)![1]!;
    expect(statSync(catalogFile).mode & 0o777).toBe(0o600);
    const sandboxes = JSON.parse(readFileSync(catalogFile, 'utf8')) as { sandboxID: string; token: string }[];
    expect(sandboxes).toHaveLength(2);
    // The printed summary names sandboxes, never their tokens.
    for (const s of sandboxes) expect(output).not.toContain(s.token);

    const connect = { 'connect-protocol-version': '1' };
    for (const s of sandboxes) {
      const ok = await post(
        port,
        '/filesystem.Filesystem/Stat',
        { ...connect, 'svc-sandbox-id': s.sandboxID, 'x-access-token': s.token },
        '{"path":"/etc"}',
      );
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body).entry).toMatchObject({ name: 'etc', path: '/etc', type: 'FILE_TYPE_DIRECTORY' });
    }
    // Without an Authorization header the agents serve the stack's agent.defaultUser ("user" by default): `~` is
    // that user's home, and the home belongs to that user.
    const home = await post(
      port,
      '/filesystem.Filesystem/Stat',
      { ...connect, 'svc-sandbox-id': sandboxes[0]!.sandboxID, 'x-access-token': sandboxes[0]!.token },
      '{"path":"~"}',
    );
    expect(home.status).toBe(200);
    expect(JSON.parse(home.body).entry).toMatchObject({ name: 'user', owner: 'user', type: 'FILE_TYPE_DIRECTORY' });

    const [first, second] = sandboxes as [{ sandboxID: string; token: string }, { sandboxID: string; token: string }];
    const crossed = await post(
      port,
      '/filesystem.Filesystem/Stat',
      { ...connect, 'svc-sandbox-id': first.sandboxID, 'x-access-token': second.token },
      '{"path":"/etc"}',
    );
    expect(crossed.status).toBe(401);
    const unknown = await post(port, '/filesystem.Filesystem/Stat', { ...connect, 'svc-sandbox-id': 'no-such-sandbox' }, '{"path":"/etc"}');
    expect(unknown.status).toBe(502);
    expect(JSON.parse(unknown.body)).toEqual({ sandboxID: 'no-such-sandbox', message: expect.any(String), code: 502 });

    // The sandboxes it built are the lab's: reachable with `lab exec`, leaving through the proxy.
    const proxied = await cli([
      'lab',
      'exec',
      'sb2',
      '--name',
      name,
      '--',
      'curl',
      '-sS',
      '--max-time',
      '5',
      '--socks5-hostname',
      '127.0.0.1:1080',
      'http://203.0.113.1/',
    ]);
    expect(proxied.stdout.trim()).toBe(/through the proxy: (\S+)/.exec(output)![1]);

    child.kill('SIGTERM');
    const code = await waitUntil('up to exit', () => child!.exitCode ?? undefined, 30_000);
    // The whole output is in the failure message, so a failed teardown says why.
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('nothing of the local system is left') });
    expect(await namespacesOf(name)).toEqual([]);
    expect((await run(['ip', 'link', 'show', 'dev', hostLinkName(name)])).code).not.toBe(0);
  });

  test('bad flags are refused before anything is built', async () => {
    const bad = await cli(['up', '--name', name, '--mode', 'socks']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--mode: got "socks"; expected one of local, transparent');
    expect(await namespacesOf(name)).toEqual([]);
  });
});
