import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, Cleanup, eventually, spawnGateway, startUpstream } from './helpers/common';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** The child processes of a process, from /proc. */
function children(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function workersOnFileCatalog() {
  const agent = await startUpstream((req, res) => res.end(`served ${req.url}`));
  cleanup.add(() => agent.close());
  const dir = await mkdtemp(join(tmpdir(), 'sk-gw-workers-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'catalog.json');
  await writeFile(file, JSON.stringify([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: 'workers-token' }]));
  const gateway = await spawnGateway(['--catalog', `file:${file}`, '--workers', '2']);
  cleanup.add(() => gateway.stop());
  return gateway;
}

const ask = (port: number, path: string) => call(port, { path, headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': 'workers-token' } });

describe('sandbox-kit gateway --workers 2', () => {
  it('runs two gateway processes on one port, each serving from the shared catalog', async () => {
    const gateway = await workersOnFileCatalog();
    const pid = gateway.child.pid as number;
    expect(children(pid)).toHaveLength(2);
    expect(gateway.output()).toMatch(/gateway listening on 127\.0\.0\.1:\d+ \(2 workers: \d+, \d+\)/);
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(gateway.port, `/r${i}`)));
    expect(replies.map((r) => r.body)).toEqual(Array.from({ length: 20 }, (_, i) => `served /r${i}`));
    // Each worker printed nothing of its own: one announcement for the whole gateway.
    expect(gateway.output().match(/listening on/g)).toHaveLength(1);
  });

  it('replaces a worker that dies and keeps serving', async () => {
    const gateway = await workersOnFileCatalog();
    const pid = gateway.child.pid as number;
    const [first] = children(pid);
    process.kill(first, 'SIGKILL');
    await eventually(async () => {
      const now = children(pid);
      expect(now).toHaveLength(2);
      expect(now).not.toContain(first);
    });
    expect((await ask(gateway.port, '/after')).body).toBe('served /after');
    expect(gateway.output()).toContain('starting another');
  });

  it('stops every worker on SIGTERM and exits 0', async () => {
    const gateway = await workersOnFileCatalog();
    const workers = children(gateway.child.pid as number);
    expect(await gateway.stop()).toBe(0);
    expect(workers.filter(alive)).toEqual([]);
  });
});
