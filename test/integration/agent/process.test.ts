/**
 * The process service with the Connect reference client for Node (and raw HTTP where the frames themselves are
 * the point): event order, keepalives, end-stream frames, pty and resize, signals, input, deadlines, detaching.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Process, type ProcessEvent, Signal } from '../../../src/contract/gen/process_pb';
import { type AgentProcess, startHostAgent, tempDir } from './helpers/common';

let agent: AgentProcess;
let url: string;
let client: Client<typeof Process>;
let root: string;

beforeAll(async () => {
  root = tempDir('agent-proc-');
  agent = await startHostAgent({ defaultUser: 'root' });
  url = `http://127.0.0.1:${agent.port}`;
  client = createClient(Process, createConnectTransport({ baseUrl: url, httpVersion: '1.1', useBinaryFormat: false }));
});

afterAll(async () => {
  await agent?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

type Outcome = {
  pid: number;
  kinds: string[];
  stdout: Buffer;
  stderr: Buffer;
  pty: Buffer;
  end?: Extract<ProcessEvent['event'], { case: 'end' }>['value'];
};

async function collect(
  stream: AsyncIterable<{ event?: ProcessEvent }>,
  onEvent?: (e: ProcessEvent, o: Outcome) => Promise<void> | void,
): Promise<Outcome> {
  const o: Outcome = { pid: 0, kinds: [], stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), pty: Buffer.alloc(0) };
  for await (const r of stream) {
    const e = r.event!;
    o.kinds.push(e.event.case ?? 'none');
    if (e.event.case === 'start') o.pid = e.event.value.pid;
    if (e.event.case === 'data') {
      const out = e.event.value.output;
      if (out.case) o[out.case] = Buffer.concat([o[out.case], Buffer.from(out.value)]);
    }
    if (e.event.case === 'end') o.end = e.event.value;
    await onEvent?.(e, o);
  }
  return o;
}

test('Start: the start event first, output, then the end event with the exit code; kinds in order', async () => {
  const o = await collect(client.start({ process: { cmd: '/bin/sh', args: ['-c', 'echo out; echo err >&2; exit 3'], envs: {} } }));
  expect(o.kinds[0]).toBe('start');
  expect(o.kinds[o.kinds.length - 1]).toBe('end');
  expect(o.pid).toBeGreaterThan(1);
  expect(o.stdout.toString()).toBe('out\n');
  expect(o.stderr.toString()).toBe('err\n');
  expect(o.end).toMatchObject({ exitCode: 3, exited: true, status: 'exit status 3' });
});

test('the raw frames: application/connect+json, enveloped events, an end-stream frame {} last', async () => {
  const body = Buffer.from(JSON.stringify({ process: { cmd: '/bin/echo', args: ['hi'] } }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  const res = await fetch(`${url}/process.Process/Start`, {
    method: 'POST',
    headers: { 'content-type': 'application/connect+json', 'connect-protocol-version': '1' },
    body: Buffer.concat([head, body]),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/connect+json');
  const raw = Buffer.from(await res.arrayBuffer());
  const frames: Array<{ flags: number; json: any }> = [];
  for (let i = 0; i < raw.length; ) {
    const len = raw.readUInt32BE(i + 1);
    frames.push({ flags: raw[i]!, json: JSON.parse(raw.subarray(i + 5, i + 5 + len).toString()) });
    i += 5 + len;
  }
  expect(frames[0]!.json).toEqual({ event: { start: { pid: expect.any(Number) } } });
  expect(frames[1]!.json).toEqual({ event: { data: { stdout: Buffer.from('hi\n').toString('base64') } } });
  expect(frames[2]!.json).toEqual({ event: { end: { exited: true, status: 'exit status 0' } } });
  expect(frames[3]).toEqual({ flags: 2, json: {} });
  expect(frames).toHaveLength(4);
});

test('keepalives arrive at the Keepalive-Ping-Interval while the process is quiet', async () => {
  const o = await collect(client.start({ process: { cmd: '/bin/sleep', args: ['2.5'] } }, { headers: { 'keepalive-ping-interval': '1' } }));
  expect(o.kinds.filter((k) => k === 'keepalive').length).toBeGreaterThanOrEqual(2);
  expect(o.end?.exitCode).toBe(0);
});

test('errors before the start event: unknown command, missing cwd, unknown user, empty cmd', async () => {
  const fail = async (req: Parameters<typeof client.start>[0], headers: Record<string, string> = {}) => {
    try {
      await collect(client.start(req, { headers }));
    } catch (err) {
      return ConnectError.from(err);
    }
    throw new Error('no error');
  };
  const missing = await fail({ process: { cmd: 'no-such-program-xyz' } });
  expect(missing.code).toBe(Code.NotFound);
  expect(missing.rawMessage).toMatch(/no-such-program-xyz.*not found in PATH/);
  const cwd = await fail({ process: { cmd: '/bin/true', cwd: '/no/such/dir' } });
  expect(cwd.code).toBe(Code.InvalidArgument);
  const who = await fail({ process: { cmd: '/bin/true' } }, { authorization: `Basic ${Buffer.from('nobody-xyz:').toString('base64')}` });
  expect(who.code).toBe(Code.Unauthenticated);
  expect((await fail({ process: { cmd: '' } })).code).toBe(Code.InvalidArgument);
  expect((await fail({})).code).toBe(Code.InvalidArgument);
});

test('SendSignal: SIGTERM ends a process (end event says so); unknown pid is not_found; UNSPECIFIED is invalid', async () => {
  const o = await collect(client.start({ process: { cmd: '/bin/sleep', args: ['30'] } }), async (e) => {
    if (e.event.case === 'start')
      await client.sendSignal({ process: { selector: { case: 'pid', value: e.event.value.pid } }, signal: Signal.SIGTERM });
  });
  expect(o.end).toMatchObject({ exitCode: -1, exited: false, status: 'signal: terminated' });
  await expect(client.sendSignal({ process: { selector: { case: 'pid', value: 999_999 } }, signal: Signal.SIGKILL })).rejects.toMatchObject(
    { code: Code.NotFound },
  );
  await expect(client.sendSignal({ process: { selector: { case: 'pid', value: o.pid } }, signal: Signal.SIGKILL })).rejects.toMatchObject({
    code: Code.NotFound,
  });
});

test('SendInput, StreamInput and CloseStdin reach the process in order; huge input is delivered whole', async () => {
  const big = Buffer.alloc(8 * 1024 * 1024, 'x');
  const o = await collect(client.start({ process: { cmd: '/usr/bin/wc', args: ['-c'] }, stdin: true }), async (e) => {
    if (e.event.case !== 'start') return;
    const sel = { selector: { case: 'pid' as const, value: e.event.value.pid } };
    await client.sendInput({ process: sel, input: { input: { case: 'stdin', value: Buffer.from('abc') } } });
    async function* inputs() {
      yield { event: { case: 'start' as const, value: { process: sel } } };
      for (let i = 0; i < big.length; i += 1024 * 1024)
        yield {
          event: {
            case: 'data' as const,
            value: { input: { input: { case: 'stdin' as const, value: big.subarray(i, i + 1024 * 1024) } } },
          },
        };
    }
    await client.streamInput(inputs());
    await client.closeStdin({ process: sel });
  });
  expect(o.stdout.toString().trim()).toBe(String(3 + big.length));
});

test('tags select processes; List shows config and tag', async () => {
  const stream = client.start({ process: { cmd: '/bin/sleep', args: ['30'], envs: { A: '1' }, cwd: root }, tag: 'sleeper' });
  const it = stream[Symbol.asyncIterator]();
  const first = await it.next();
  const pid = (first.value.event.event.value as { pid: number }).pid;
  const listed = (await client.list({})).processes.find((p) => p.pid === pid);
  expect(listed).toMatchObject({ pid, tag: 'sleeper', config: { cmd: '/bin/sleep', args: ['30'], envs: { A: '1' }, cwd: root } });
  await client.sendSignal({ process: { selector: { case: 'tag', value: 'sleeper' } }, signal: Signal.SIGKILL });
  let end: Record<string, unknown> | undefined;
  for (let r = await it.next(); !r.done; r = await it.next())
    if (r.value.event?.event.case === 'end') end = { ...r.value.event.event.value };
  expect(end).toMatchObject({ status: 'signal: killed' });
});

test('pty: output comes as pty data from a terminal of the requested size; Update resizes it', async () => {
  let resized = false;
  const o = await collect(
    client.start({
      process: { cmd: '/bin/sh', args: ['-c', 'stty size; read line; stty size'], envs: { TERM: 'xterm' } },
      pty: { size: { cols: 100, rows: 30 } },
      stdin: true,
    }),
    async (_e, acc) => {
      if (!resized && acc.pty.toString().includes('30 100')) {
        resized = true;
        const sel = { selector: { case: 'pid' as const, value: acc.pid } };
        await client.update({ process: sel, pty: { size: { cols: 120, rows: 40 } } });
        await client.sendInput({ process: sel, input: { input: { case: 'pty', value: Buffer.from('go\n') } } });
      }
    },
  );
  expect(o.stdout.length).toBe(0);
  expect(o.pty.toString()).toMatch(/30 100[\s\S]*40 120/);
  expect(o.end?.exitCode).toBe(0);
});

test('Connect-Timeout-Ms kills a process that runs past it and fails the call; a deadline beyond any timer does not end it at once', async () => {
  let pid = 0;
  const late = await collect(
    client.start({ process: { cmd: '/bin/sleep', args: ['30'] } }, { headers: { 'connect-timeout-ms': '500' } }),
    (e) => {
      if (e.event.case === 'start') pid = e.event.value.pid;
    },
  ).catch((err: unknown) => ConnectError.from(err));
  expect(late).toMatchObject({ code: Code.DeadlineExceeded });
  expect((late as ConnectError).rawMessage).toMatch(/Connect-Timeout-Ms \(500 ms\)/);
  for (let i = 0; i < 100 && fs.existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 50));
  expect(pid > 0 && !fs.existsSync(`/proc/${pid}`)).toBe(true); // killed, not left running
  const far = await collect(
    client.start({ process: { cmd: '/bin/echo', args: ['ok'] } }, { headers: { 'connect-timeout-ms': '4294967296' } }),
  );
  expect(far.stdout.toString()).toBe('ok\n');
  const res = await fetch(`${url}/process.Process/List`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', 'connect-timeout-ms': '0' },
    body: '{}',
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { message: string }).message).toMatch(/Connect-Timeout-Ms "0"/);
});

test('a client that disconnects leaves the process running; Connect re-attaches and sees the rest', async () => {
  const marker = `${root}/detached-done`;
  const ac = new AbortController();
  let pid = 0;
  await collect(
    client.start({ process: { cmd: '/bin/sh', args: ['-c', `sleep 1; echo later; touch ${marker}`] } }, { signal: ac.signal }),
    (e) => {
      if (e.event.case === 'start') {
        pid = e.event.value.pid;
        ac.abort();
      }
    },
  ).catch(() => undefined);
  expect(pid).toBeGreaterThan(0);
  const o = await collect(client.connect({ process: { selector: { case: 'pid', value: pid } } }));
  expect(o.kinds[0]).toBe('start');
  expect(o.stdout.toString()).toBe('later\n');
  expect(o.end?.exitCode).toBe(0);
  expect(fs.existsSync(marker)).toBe(true);
});

test('output faster than the client reads is back-pressured: the producer waits, the agent does not buffer it', async () => {
  const total = 256 * 1024 * 1024;
  const body = Buffer.from(JSON.stringify({ process: { cmd: '/bin/sh', args: ['-c', `head -c ${total} /dev/zero`] } }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  const req = http.request(`${url}/process.Process/Start`, {
    method: 'POST',
    headers: { 'content-type': 'application/connect+json', 'connect-protocol-version': '1' },
  });
  req.end(Buffer.concat([head, body]));
  const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
  res.pause();
  const rssBefore = process.memoryUsage().rss;
  await new Promise((r) => setTimeout(r, 1500)); // the client reads nothing meanwhile
  const rssStalled = process.memoryUsage().rss;
  let received = 0;
  res.on('data', (d: Buffer) => (received += d.length));
  res.resume();
  await new Promise((r) => res.once('end', r));
  // base64 in JSON envelopes: 4/3 of the bytes plus framing.
  expect(received).toBeGreaterThan((total * 4) / 3);
  expect(rssStalled - rssBefore).toBeLessThan(64 * 1024 * 1024);
}, 60_000);
