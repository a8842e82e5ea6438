/**
 * Answer heads from a sandbox that writes raw bytes: the common shape (HTTP/1.1, one Content-Length, plain fields) is
 * passed on as the sandbox wrote it with only the hop-by-hop lines left out and Via added; every other shape goes
 * through llhttp as before, and a hostile one never reaches the client as an answer.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { MemoryCatalog } from '../../../src/catalog';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { Cleanup } from './helpers/common';
import { header, splitMessages, type WireMessage } from './helpers/wire';

const TOKEN = 'answer-heads-token';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** The bytes of one answer, written in one piece or, for a split, in pieces with a pause between. */
type Answer = string | string[];

interface RawUpstream {
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  /** Requests read so far (their start lines). */
  requests: string[];
}

/**
 * A sandbox service that answers the n-th request (from 0, over all its connections) with answer(n), byte for byte.
 * Requests are read as heads with an optional Content-Length body.
 */
async function rawUpstream(answer: (n: number) => Answer): Promise<RawUpstream> {
  const sockets = new Set<Socket>();
  const state: RawUpstream = { port: 0, connections: 0, requests: [] };
  const server: Server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', async (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headText = pending.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *([0-9]+)/i.exec(headText)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.subarray(end + 4 + length);
        const n = state.requests.push(headText.split('\r\n')[0]) - 1;
        const bytes = answer(n);
        for (const [k, piece] of (Array.isArray(bytes) ? bytes : [bytes]).entries()) {
          if (k > 0) await new Promise((r) => setTimeout(r, 30));
          if (!socket.destroyed) socket.write(piece, 'latin1');
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as { port: number }).port;
  cleanup.add(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return state;
}

async function gatewayFor(upstreamPort: number): Promise<RunningGateway> {
  const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: upstreamPort, token: TOKEN }]);
  const gateway = await startGateway({ catalog });
  cleanup.add(() => gateway.close(100));
  return gateway;
}

const request = (path: string, body = '{}') =>
  `POST ${path} HTTP/1.1\r\nHost: gateway.test\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

/**
 * Sends the requests on one client connection, one after the other, and returns the answers read from it (as many as
 * came before `count` answers or the connection's end), and whether the gateway closed the connection.
 */
async function exchange(port: number, requests: string[]): Promise<{ answers: WireMessage[]; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  cleanup.add(() => socket.destroy());
  let bytes = Buffer.alloc(0);
  let closed = false;
  let wake: (() => void) | undefined;
  socket.on('data', (d: Buffer) => {
    bytes = Buffer.concat([bytes, d]);
    wake?.();
  });
  socket.on('close', () => {
    closed = true;
    wake?.();
  });
  socket.on('error', () => {});
  const answers = () => splitMessages(bytes, { responses: true, partialOk: true });
  for (let k = 0; k < requests.length; k++) {
    if (closed) break;
    socket.write(requests[k]);
    const until = Date.now() + 10_000;
    while (!closed && answers().length <= k && Date.now() < until)
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 100);
      });
  }
  return { answers: answers(), closed };
}

const AGENT_LIKE = (body: string) =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nDate: Thu, 26 Nov 2026 23:37:32 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=65\r\nX-Tail:\tend\r\n\r\n${body}`;

describe('answer heads of the common shape', () => {
  it('reach the client as written, less Connection and Keep-Alive, plus Via; the connection to the sandbox is reused', async () => {
    const upstream = await rawUpstream((n) => AGENT_LIKE(JSON.stringify({ n })));
    const gateway = await gatewayFor(upstream.port);
    const { answers, closed } = await exchange(gateway.port, [request('/a'), request('/b'), request('/c')]);
    expect(closed).toBe(false);
    expect(answers.map((a) => a.body.toString())).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    for (const a of answers) {
      expect(a.startLine).toBe('HTTP/1.1 200 OK');
      expect(a.headers).toEqual([
        ['content-type', 'application/json'],
        ['content-length', '7'],
        ['Date', 'Thu, 26 Nov 2026 23:37:32 GMT'],
        ['X-Tail', 'end'],
        ['via', '1.1 sandbox-kit-gateway'],
      ]);
    }
    expect(upstream.connections).toBe(1);
  });

  it('an answer with Connection: close is the last on its connection to the sandbox, and the next call opens another', async () => {
    const upstream = await rawUpstream((n) => `HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\nConnection: close\r\n\r\n${n}`);
    const gateway = await gatewayFor(upstream.port);
    const { answers } = await exchange(gateway.port, [request('/a'), request('/b')]);
    expect(answers.map((a) => [a.startLine, a.body.toString(), header(a, 'connection')])).toEqual([
      ['HTTP/1.1 404 Not Found', '0', []],
      ['HTTP/1.1 404 Not Found', '1', []],
    ]);
    expect(upstream.connections).toBe(2);
  });

  it('a head split over two reads, and a chunked answer, are read by llhttp, before and after answers of the common shape', async () => {
    const answers: Answer[] = [
      AGENT_LIKE('"first"'),
      ['HTTP/1.1 200 OK\r\nContent-Le', 'ngth: 5\r\n\r\nsplit'],
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      AGENT_LIKE('"last"'),
    ];
    const upstream = await rawUpstream((n) => answers[n]);
    const gateway = await gatewayFor(upstream.port);
    const result = await exchange(gateway.port, [request('/a'), request('/b'), request('/c'), request('/d')]);
    expect(result.answers.map((a) => a.body.toString())).toEqual(['"first"', 'split', 'abc', '"last"']);
    expect(upstream.connections).toBe(1);
  });
});

describe('answer heads the gateway must not pass on', () => {
  const hostile: [string, string][] = [
    ['two Content-Length fields', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!'],
    ['Content-Length and Transfer-Encoding', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['a space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello'],
    ['a bare LF', 'HTTP/1.1 200 OK\r\nContent-Length: 5\nX: y\r\n\r\nhello'],
    ['a folded line', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: y\r\n z\r\n\r\nhello'],
    ['a Content-Length list', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello'],
    ['an invalid name byte', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX(Y): z\r\n\r\nhello'],
  ];

  it.each(hostile)('%s: 502 to the client, and the next call gets its own answer on a new connection', async (_name, bad) => {
    const upstream = await rawUpstream((n) => (n === 0 ? bad : AGENT_LIKE('"next"')));
    const gateway = await gatewayFor(upstream.port);
    const first = await exchange(gateway.port, [request('/a')]);
    expect(first.answers.map((a) => a.startLine)).toEqual(['HTTP/1.1 502 Bad Gateway']);
    const second = await exchange(gateway.port, [request('/b')]);
    expect(second.answers.map((a) => a.body.toString())).toEqual(['"next"']);
    expect(upstream.connections).toBe(2);
  });

  it('bytes after an answer of the common shape never become the answer to a later call', async () => {
    const forged = 'HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged';
    const upstream = await rawUpstream((n) => (n === 0 ? `${AGENT_LIKE('"real"')}${forged}` : AGENT_LIKE(`"real ${n}"`)));
    const gateway = await gatewayFor(upstream.port);
    const first = await exchange(gateway.port, [request('/a')]);
    // Cut (the connection to the sandbox is out of step) or whole, never followed by the forged answer.
    expect(first.answers.map((a) => a.body.toString()).filter((b) => b !== '"real"')).toEqual([]);
    const later = await exchange(gateway.port, [request('/b'), request('/c')]);
    expect(later.answers.map((a) => a.body.toString())).toEqual(['"real 1"', '"real 2"']);
  });
});
