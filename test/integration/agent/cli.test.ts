/**
 * `sandbox-kit agent` as a process (from the built dist): its flags, its ready line, and the permission errors
 * of an agent that runs as an unprivileged user.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type AgentProcess, createUser, rawCall, REPO, spawnAgent, startHostAgent, startCliAgent, tempDir } from './helpers/common';
import { CLI } from '../../helpers/cli';

let root: string;
let secrets: string; // token files, kept out of the listed tree
let user: ReturnType<typeof createUser>;

beforeAll(() => {
  root = tempDir('agent-cli-');
  secrets = tempDir('agent-cli-tokens-');
  fs.chmodSync(root, 0o755);
  user = createUser('skcli', root);
  fs.mkdirSync(path.join(root, 'open'));
  fs.writeFileSync(path.join(root, 'open/readme.txt'), 'hi');
  fs.mkdirSync(path.join(root, 'secret'), { mode: 0o700 });
  fs.writeFileSync(path.join(root, 'secret/key.txt'), 'k');
  fs.mkdirSync(path.join(root, 'listonly'));
  fs.writeFileSync(path.join(root, 'listonly/a.txt'), 'a');
  fs.chmodSync(path.join(root, 'listonly'), 0o744); // others may read the names but not stat them
  fs.writeFileSync(path.join(root, 'file.txt'), 'x');
  spawnSync('setfattr', ['-n', 'user.e2b.tag', '-v', 'yes', path.join(root, 'file.txt')]);
});

afterAll(() => {
  user?.remove();
  if (root) fs.rmSync(root, { recursive: true, force: true });
  if (secrets) fs.rmSync(secrets, { recursive: true, force: true });
});

test('--token-file (trailing newline trimmed), --brand, --max-entries, --default-user', async () => {
  const tokenFile = path.join(secrets, 'token');
  fs.writeFileSync(tokenFile, 'tok-123\n', { mode: 0o600 });
  const agent = await startCliAgent(['--token-file', tokenFile, '--brand', 'E2b', '--max-entries', '2', '--default-user', user.name]);
  try {
    const url = `http://127.0.0.1:${agent.port}`;
    const body = JSON.stringify({ path: 'file.txt' });
    expect((await rawCall(url, 'Stat', body)).status).toBe(401);
    const ok = await rawCall(url, 'Stat', body, { 'x-access-token': 'tok-123' });
    expect(ok.status).toBe(200);
    expect(ok.json.entry.path).toBe(path.join(root, 'file.txt')); // relative to the default user's home
    expect(ok.json.entry.metadata).toEqual({ tag: 'yes' });
    const many = await rawCall(url, 'ListDir', JSON.stringify({ path: root }), { 'x-access-token': 'tok-123' });
    expect(many.json.code).toBe('resource_exhausted');
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(204);
  } finally {
    await agent.stop();
  }
  expect(agent.child.exitCode).toBe(0);
});

test('an agent bundle that lost its native addon says so once on stderr, and lists the same entries', async () => {
  const tokenFile = path.join(secrets, 'token-bundle');
  fs.writeFileSync(tokenFile, 'tok-b', { mode: 0o600 });
  const bundleDir = tempDir('agent-cli-bundle-');
  const built = path.join(REPO, 'dist/bundle');
  for (const f of fs.readdirSync(built)) if (f !== 'native-walk.node') fs.copyFileSync(path.join(built, f), path.join(bundleDir, f));
  const flags = ['--host', '127.0.0.1', '--port', '0', '--token-file', tokenFile, '--default-user', user.name];
  const agents: AgentProcess[] = [];
  try {
    agents.push(await spawnAgent([process.execPath, path.join(bundleDir, 'agent.js'), ...flags]));
    agents.push(await spawnAgent([process.execPath, path.join(REPO, 'dist/bundle/agent.js'), ...flags]));
    const listings = [];
    for (const a of agents) {
      const listed = await rawCall(`http://127.0.0.1:${a.port}`, 'ListDir', JSON.stringify({ path: root, depth: 3 }), {
        'x-access-token': 'tok-b',
      });
      expect(listed.status).toBe(200);
      listings.push(listed.json);
    }
    expect(listings[0]).toEqual(listings[1]);
    expect(agents[0]!.stderr().match(/ListDir walks with node:fs/g)).toHaveLength(1);
    expect(agents[0]!.stderr()).toContain(
      `agent: ListDir walks with node:fs, not the native walk: ${path.join(bundleDir, 'native-walk.node')} not found`,
    );
    expect(agents[1]!.stderr()).not.toContain('ListDir walks');
  } finally {
    for (const a of agents) await a.stop();
    fs.rmSync(bundleDir, { recursive: true, force: true });
  }
});

test('bad flags and a missing default user exit non-zero with a clear message', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, 'agent', ...args], { encoding: 'utf8', timeout: 20_000 });
  const port = run('--port', 'http', '--max-entries', 'many');
  expect(port.status).toBe(2); // usage error
  expect(port.stderr).toContain('--port');
  expect(port.stderr).toContain('--max-entries'); // every bad flag at once
  const unknown = run('--bogus');
  expect(unknown.status).toBe(2);
  expect(unknown.stderr).toContain('--token-file');
  const nobody = run('--port', '0', '--default-user', 'no-such-user-anywhere');
  expect(nobody.status).toBe(1); // a failure, not a usage error
  expect(nobody.stderr).toContain('no-such-user-anywhere');
  const empty = path.join(secrets, 'empty-token');
  fs.writeFileSync(empty, '\n');
  const noToken = run('--port', '0', '--token-file', empty);
  expect(noToken.status).not.toBe(0);
  expect(noToken.stderr).toContain('empty');
  const help = run('--help');
  expect(help.status).toBe(0);
  expect(help.stdout).toContain('--max-entries');
});

test('as an unprivileged user: an unreadable listed directory is permission_denied, unreadable subdirectories are listed but not descended', async () => {
  const agent = await startHostAgent({ defaultUser: user.name }, user);
  try {
    const url = `http://127.0.0.1:${agent.port}`;
    const denied = await rawCall(url, 'ListDir', JSON.stringify({ path: path.join(root, 'secret') }));
    expect([denied.status, denied.json.code]).toEqual([403, 'permission_denied']);
    const walk = await rawCall(url, 'ListDir', JSON.stringify({ path: root, depth: 2 }));
    expect(walk.status).toBe(200);
    const rel = walk.json.entries.map((e: { path: string }) => path.relative(root, e.path));
    expect(rel).toEqual(['file.txt', 'listonly', 'open', 'open/readme.txt', 'secret']);
    const listonly = await rawCall(url, 'ListDir', JSON.stringify({ path: path.join(root, 'listonly') }));
    expect([listonly.status, listonly.json.entries]).toEqual([200, []]);
    const statDenied = await rawCall(url, 'Stat', JSON.stringify({ path: path.join(root, 'secret/key.txt') }));
    expect([statDenied.status, statDenied.json.code]).toEqual([403, 'permission_denied']);
  } finally {
    await agent.stop();
  }
});
