/**
 * The agent's memory outside V8's heap stays bounded however many clients list a large tree or download a large file
 * at once and however slowly they read: ListDir's answers and batches stay within --max-response-bytes, and a
 * download holds about two 64 KiB buffers. They come from one pool and go back to it, so nothing is left for a later
 * collection (which V8 starts only after about 64 MiB more of such memory). The agent samples its own ArrayBuffer
 * memory every few milliseconds; the test reads the maximum. The legitimate paths: every download's bytes are the
 * file's, and one listing after the burst is answered whole. A file that shrinks while it is sent, or a client that
 * stops reading, ends the connection.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { rawCall, startHostAgent, tempDir, type AgentProcess } from './helpers/common';

jest.setTimeout(120_000);

const MiB = 1024 * 1024;
const BUDGET = 8 * MiB;
const ENTRIES = 24_000;

/** The agent answers SIGUSR2 with the most ArrayBuffer memory it has held since the last question. */
const PROBE = `
  let most = 0;
  setInterval(() => { most = Math.max(most, process.memoryUsage().arrayBuffers); }, 3).unref();
  process.on('SIGUSR2', () => { most = Math.max(most, process.memoryUsage().arrayBuffers); console.log('most: ' + most); most = 0; });`;

let scratch: string | undefined;
let root: string;
let big: string;
let bigDigest: string;
let agent: AgentProcess | undefined;

function mostArrayBuffers(a: AgentProcess): Promise<number> {
  return new Promise((resolve) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /most: (\d+)\n/.exec(out);
      if (!m) return;
      a.child.stdout!.off('data', onData);
      resolve(Number(m[1]));
    };
    a.child.stdout!.on('data', onData);
    a.child.kill('SIGUSR2');
  });
}

/** `n` clients ask for the same listing at once and read their answers 16 KiB every 10 ms; resolves with their statuses. */
function slowListings(port: number, dir: string, n: number): Promise<string[]> {
  const body = JSON.stringify({ path: dir, depth: 3 });
  const one = () =>
    new Promise<string>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      let head = '';
      s.on('error', () => resolve('error'));
      s.once('connect', () => {
        s.pause();
        s.write(
          `POST /filesystem.Filesystem/ListDir HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nConnect-Protocol-Version: 1\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        const timer = setInterval(() => {
          const piece = s.read(16 * 1024) as Buffer | null;
          if (piece !== null && head === '') head = piece.toString('latin1', 0, 12);
          if (s.readableEnded) {
            clearInterval(timer);
            s.destroy();
            resolve(head);
          }
        }, 10);
        s.on('close', () => {
          clearInterval(timer);
          resolve(head);
        });
      });
    });
  return Promise.all(Array.from({ length: n }, one));
}

/** A GET of `file` read 64 KiB every `everyMs`; resolves with the status line, the body's bytes and their SHA-256. */
function slowDownload(
  port: number,
  file: string,
  everyMs: number,
  onFirstBytes?: () => void,
): Promise<{ head: string; bytes: number; digest: string }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const hash = createHash('sha256');
    let head = '';
    let pending = Buffer.alloc(0);
    let bytes = 0;
    const finish = () => {
      clearInterval(timer);
      resolve({ head: head.split('\r\n', 1)[0]!, bytes, digest: hash.digest('hex') });
    };
    s.on('error', () => undefined);
    s.on('close', finish);
    s.pause();
    s.write(`GET /files?path=${encodeURIComponent(file)} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
    const timer = setInterval(() => {
      const piece = s.read(64 * 1024) as Buffer | null;
      if (piece === null) {
        if (s.readableEnded) s.destroy();
        return;
      }
      if (head === '') {
        pending = Buffer.concat([pending, piece]);
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = pending.toString('latin1', 0, end);
        const body = pending.subarray(end + 4);
        bytes += body.length;
        hash.update(body);
        onFirstBytes?.();
        return;
      }
      bytes += piece.length;
      hash.update(piece);
    }, everyMs);
  });
}

beforeAll(() => {
  scratch = tempDir('sk-buffer-memory-');
  big = path.join(scratch, 'big.bin');
  const data = randomBytes(16 * MiB);
  fs.writeFileSync(big, data);
  bigDigest = createHash('sha256').update(data).digest('hex');
  root = path.join(scratch, 'tree');
  fs.mkdirSync(root);
  let n = 0;
  for (let i = 0; n < ENTRIES; i++) {
    const d = path.join(root, `d${i}`);
    fs.mkdirSync(d);
    n++;
    for (let k = 0; k < 200 && n < ENTRIES; k++, n++) fs.writeFileSync(path.join(d, `a-file-with-a-longer-name-${k}.txt`), '');
  }
});

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

test('32 slow concurrent listings of a large tree hold no more outside the heap than the budget', async () => {
  agent = await startHostAgent({ defaultUser: 'root', maxResponseBytes: BUDGET }, undefined, PROBE);
  const base = `http://127.0.0.1:${agent.port}`;
  const idle = await mostArrayBuffers(agent);
  for (let round = 0; round < 3; round++) {
    const heads = await slowListings(agent.port, root, 32);
    // The budget holds one answer at a time: some are answered whole, the rest refused as resource_exhausted.
    expect(heads.filter((h) => h === 'HTTP/1.1 200').length).toBeGreaterThan(0);
    expect(heads.filter((h) => h === 'HTTP/1.1 429').length).toBeGreaterThan(0);
    expect(heads.every((h) => h === 'HTTP/1.1 200' || h === 'HTTP/1.1 429')).toBe(true);
  }
  // The budget, a socket's write in flight per client and the pool threads' batches; not the answers already dropped.
  expect(await mostArrayBuffers(agent)).toBeLessThan(idle + BUDGET + 2 * MiB);
  const whole = await rawCall(base, 'ListDir', JSON.stringify({ path: root, depth: 3 }));
  expect(whole.status).toBe(200);
  expect((whole.json as { entries: unknown[] }).entries.length).toBe(ENTRIES);
});

test('64 slow concurrent downloads of a large file hold about two buffers each, and every one gets the whole file', async () => {
  agent = await startHostAgent({ defaultUser: 'root' }, undefined, PROBE);
  const idle = await mostArrayBuffers(agent);
  const got = await Promise.all(Array.from({ length: 64 }, () => slowDownload(agent!.port, big, 2)));
  for (const g of got) expect(g).toEqual({ head: 'HTTP/1.1 200 OK', bytes: 16 * MiB, digest: bigDigest });
  expect(await mostArrayBuffers(agent)).toBeLessThan(idle + 64 * 3 * 64 * 1024);
});

test('a file that shrinks while it is sent, and a client that stops reading, end the connection', async () => {
  agent = await startHostAgent({ defaultUser: 'root', stallTimeoutMs: 500 }, undefined, PROBE);
  const shrinking = path.join(scratch!, 'shrinking.bin');
  fs.copyFileSync(big, shrinking);
  const cut = await slowDownload(agent.port, shrinking, 20, () => fs.truncateSync(shrinking, MiB));
  expect(cut.head).toBe('HTTP/1.1 200 OK');
  expect(cut.bytes).toBeLessThan(16 * MiB);
  // A client that reads nothing after its first bytes for three times the stall time, then everything: the agent
  // dropped it meanwhile, so it gets what the sockets held and an end, not the file.
  const stalled = await new Promise<number>((resolve) => {
    const s = net.connect(agent!.port, '127.0.0.1');
    let bytes = 0;
    s.on('error', () => undefined);
    s.once('data', () => {
      s.pause();
      setTimeout(() => s.resume(), 1500);
    });
    s.on('data', (d: Buffer) => (bytes += d.length));
    s.on('close', () => resolve(bytes));
    s.write(`GET /files?path=${encodeURIComponent(big)} HTTP/1.1\r\nHost: a\r\n\r\n`);
  });
  expect(stalled).toBeLessThan(16 * MiB);
  // The legitimate path on the same agent: a reader that keeps reading gets the whole file.
  expect(await slowDownload(agent.port, big, 0)).toEqual({ head: 'HTTP/1.1 200 OK', bytes: 16 * MiB, digest: bigDigest });
});
