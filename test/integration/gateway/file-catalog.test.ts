import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashAccessToken } from '../../../src/contract';
import { call, Cleanup, eventually, spawnGateway, startUpstream, type Upstream } from './helpers/common';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function upstreamNamed(name: string): Promise<Upstream> {
  const upstream = await startUpstream((_req, res) => res.end(name));
  cleanup.add(() => upstream.close());
  return upstream;
}

async function catalogDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sk-gw-file-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const ask = (port: number, id: string, token: string) => call(port, { headers: { 'Svc-Sandbox-Id': id, 'X-Access-Token': token } });

describe('file catalog (sandbox-kit gateway --catalog file:PATH)', () => {
  it('routes the sandboxes of the file, checking plain tokens it hashed on load (and tokenHash entries)', async () => {
    const one = await upstreamNamed('one');
    const two = await upstreamNamed('two');
    const dir = await catalogDir();
    const file = join(dir, 'catalog.json');
    await writeFile(
      file,
      JSON.stringify([
        { sandboxID: 'one', host: '127.0.0.1', agentPort: one.port, token: 'plain-one', state: 'running' },
        { sandboxID: 'two', host: '127.0.0.1', agentPort: two.port, tokenHash: hashAccessToken('plain-two'), state: 'running' },
        { sandboxID: 'sleepy', host: '127.0.0.1', agentPort: two.port, token: 'plain-3', state: 'paused' },
      ]),
    );
    const gateway = await spawnGateway(['--catalog', `file:${file}`]);
    cleanup.add(() => gateway.stop());
    expect((await ask(gateway.port, 'one', 'plain-one')).body).toBe('one');
    expect((await ask(gateway.port, 'two', 'plain-two')).body).toBe('two');
    expect((await ask(gateway.port, 'one', hashAccessToken('plain-one'))).status).toBe(401);
    const paused = await ask(gateway.port, 'sleepy', 'plain-3');
    expect(paused.status).toBe(502);
    expect(JSON.parse(paused.body).message).toContain('paused');
  });

  it('re-reads the file when it is rewritten or replaced, and keeps the last good catalog when a change is broken', async () => {
    const first = await upstreamNamed('first');
    const second = await upstreamNamed('second');
    const dir = await catalogDir();
    const file = join(dir, 'catalog.json');
    await writeFile(file, JSON.stringify([{ sandboxID: 'sb', host: '127.0.0.1', agentPort: first.port, token: 't1' }]));
    const gateway = await spawnGateway(['--catalog', `file:${file}`]);
    cleanup.add(() => gateway.stop());
    expect((await ask(gateway.port, 'sb', 't1')).body).toBe('first');

    // Rewritten in place: new address and new token.
    await writeFile(file, JSON.stringify([{ sandboxID: 'sb', host: '127.0.0.1', agentPort: second.port, token: 't2' }]));
    await eventually(async () => expect((await ask(gateway.port, 'sb', 't2')).body).toBe('second'));
    expect((await ask(gateway.port, 'sb', 't1')).status).toBe(401);

    // A broken save is reported and ignored.
    await writeFile(file, '[{"sandboxID": "sb", "host": ');
    await eventually(async () => expect(gateway.output()).toContain('keeping the previous catalog'));
    expect((await ask(gateway.port, 'sb', 't2')).body).toBe('second');

    // Replaced atomically by rename, as deploy tools do: the sandbox is gone, another appears.
    const staged = join(dir, 'catalog.json.new');
    await writeFile(staged, JSON.stringify([{ sandboxID: 'other', host: '127.0.0.1', agentPort: first.port, token: 't3' }]));
    await rename(staged, file);
    await eventually(async () => expect((await ask(gateway.port, 'other', 't3')).body).toBe('first'));
    const gone = await ask(gateway.port, 'sb', 't2');
    expect(gone.status).toBe(502);
    expect(JSON.parse(gone.body)).toEqual({ sandboxID: 'sb', message: expect.stringContaining('not found'), code: 502 });
  });

  it('refuses to start on a file with errors, naming the entry and field', async () => {
    const dir = await catalogDir();
    const file = join(dir, 'catalog.json');
    await writeFile(
      file,
      JSON.stringify([
        { sandboxID: 'ok', host: '127.0.0.1', token: 't' },
        { sandboxID: 'bad', host: '127.0.0.1', token: 't', state: 'frozen' },
      ]),
    );
    await expect(spawnGateway(['--catalog', `file:${file}`])).rejects.toThrow('[1].state');
  });

  it('auto-resumes through the platform API (--resume-url, --api-key-file) and then serves the request', async () => {
    const dir = await catalogDir();
    const file = join(dir, 'catalog.json');
    const keyFile = join(dir, 'api-key');
    await writeFile(keyFile, 'platform-key\n', { mode: 0o600 });
    const agent = await upstreamNamed('awake');
    const entry = { sandboxID: 'nap', host: '127.0.0.1', agentPort: agent.port, token: 'tok', autoResume: true };
    await writeFile(file, JSON.stringify([{ ...entry, state: 'paused' }]));
    // A stand-in for the platform API: resuming marks the sandbox running in the catalog.
    const seen: string[] = [];
    const platform = await startUpstream((req, res) => {
      seen.push(`${req.method} ${req.url} ${String(req.headers['x-api-key'])}`);
      void writeFile(file, JSON.stringify([{ ...entry, state: 'running' }])).then(() => res.end('{}'));
    });
    cleanup.add(() => platform.close());
    const gateway = await spawnGateway([
      '--catalog',
      `file:${file}`,
      '--resume-url',
      `http://127.0.0.1:${platform.port}/`,
      '--api-key-file',
      keyFile,
    ]);
    cleanup.add(() => gateway.stop());

    expect((await ask(gateway.port, 'nap', 'wrong')).status).toBe(401);
    expect(seen).toEqual([]);
    const reply = await ask(gateway.port, 'nap', 'tok');
    expect(reply.body).toBe('awake');
    expect(seen).toEqual(['POST /sandboxes/nap/resume platform-key']);
  });
});
