/**
 * Sandboxes run their agent from the bundle directory (bound in), so a bundle made again while they run (a rebuild,
 * an upgrade of the kit, another test file's bundle step) must leave their agents running: every file goes into place
 * by a rename, and a running agent keeps the files it has mapped. Written over in place, the native addons an agent
 * maps lost their pages under it, and it died (SIGSEGV or SIGBUS) in its next ListDir.
 */
import * as fs from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { bundle, bundleEntries, LOADER } from '../../../scripts/bundle';
import { agentNodeFlags } from '../../../src/runtime/agent-payload';
import { type AgentProcess, spawnAgent } from '../agent/helpers/common';

jest.setTimeout(180_000);

const AGENT = bundleEntries().find((e) => e.name === 'agent')!;
let dir: string;
let tree: string;
let agent: AgentProcess | undefined;
const complaints: string[] = [];

/** bundle() says on stderr when its code-cache run failed; kept for the failure message, not printed. */
async function quietBundle(): Promise<void> {
  const spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void complaints.push(args.join(' ')));
  try {
    await bundle(AGENT, dir);
  } finally {
    spy.mockRestore();
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(join(tmpdir(), 'skt-rebundle-'));
  tree = fs.mkdtempSync(join(tmpdir(), 'skt-rebundle-tree-'));
  for (let i = 0; i < 20; i++) {
    fs.mkdirSync(join(tree, `d${i}`));
    for (let j = 0; j < 20; j++) fs.writeFileSync(join(tree, `d${i}`, `f${j}`), 'x');
  }
  await quietBundle();
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  for (const d of [dir, tree]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

/** The agent from `dir`, as the runtime starts it (its loader, its flags), through the tests' one agent spawner. */
function agentFromDir(): Promise<AgentProcess> {
  return spawnAgent([
    process.execPath,
    ...agentNodeFlags(),
    join(dir, LOADER),
    'agent',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--default-user',
    userInfo().username,
  ]);
}

async function listDir(port: number): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}/filesystem.Filesystem/ListDir`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
    body: JSON.stringify({ path: tree, depth: 2 }),
  });
  await r.arrayBuffer();
  return r.status;
}

/** The files of `dir` the process maps, as /proc/<pid>/maps names them (" (deleted)" once unlinked). */
function mappedFromDir(pid: number): string[] {
  const files = fs
    .readFileSync(`/proc/${pid}/maps`, 'utf8')
    .split('\n')
    .map((line) => line.split(/\s+/).slice(5).join(' '))
    .filter((file) => file.startsWith(`${dir}/`));
  return [...new Set(files)].sort();
}

test('a bundle made again while an agent runs from its directory: the agent keeps answering ListDir, from the files it had', async () => {
  agent = await agentFromDir();
  const { port } = agent;
  const pid = agent.child.pid as number;
  expect(await listDir(port)).toBe(200);
  const before = mappedFromDir(pid);
  // The agent maps its native addons from the directory: what a write in place would pull from under it.
  expect(before).toContain(join(dir, 'native-walk.node'));

  // ListDirs run the native walk all the while the bundle is made again, twice.
  let bundling = true;
  const statuses: number[] = [];
  const calls = Array.from({ length: 2 }, async () => {
    while (bundling) statuses.push(await listDir(port).catch(() => -1));
  });
  try {
    await quietBundle();
    await quietBundle();
  } finally {
    bundling = false;
    await Promise.all(calls);
  }
  expect({ exit: agent.child.signalCode ?? agent.child.exitCode, failed: statuses.filter((s) => s !== 200).length }).toEqual({
    exit: null,
    failed: 0,
  });
  expect(statuses.length).toBeGreaterThan(0);
  expect(await listDir(port)).toBe(200);
  // Replaced, not written over: every file it maps from the directory is the old one, unlinked now.
  expect(mappedFromDir(pid)).toEqual(before.map((f) => `${f} (deleted)`));
  expect(complaints).toEqual([]);
});
