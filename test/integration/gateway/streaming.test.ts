import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { MemoryCatalog } from '../../../src/catalog';
import { call, Cleanup, eventually, openStream, startUpstream, type Upstream } from './helpers/common';

const TOKEN = 'stream-token';
const HEADERS = { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN };
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function setup(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ gateway: RunningGateway; upstream: Upstream; catalog: MemoryCatalog }> {
  const upstream = await startUpstream(handler);
  cleanup.add(() => upstream.close());
  const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: upstream.port, token: TOKEN }]);
  const gateway = await startGateway({ catalog });
  cleanup.add(() => gateway.close(100));
  return { gateway, upstream, catalog };
}

/** Resolves with the next chunk a response delivers. */
function nextChunk(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    res.once('data', (c: Buffer) => resolve(c.toString()));
    res.once('error', reject);
  });
}

/** Resolves when a response ends or breaks, saying whether it arrived complete. */
function outcome(res: IncomingMessage): Promise<{ complete: boolean; body: string }> {
  return new Promise((resolve) => {
    let body = '';
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      resolve({ complete: res.complete, body });
    };
    res.on('data', (c: Buffer) => (body += c.toString()));
    res.on('end', settle);
    res.on('error', settle);
    res.on('close', settle);
  });
}

describe('gateway streaming', () => {
  it('streams the request and the response body in both directions without waiting for either to end', async () => {
    const { gateway } = await setup((req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.flushHeaders();
      req.on('data', (c: Buffer) => res.write(`echo:${c.toString()}`));
      req.on('end', () => res.end());
    });
    let request!: import('node:http').ClientRequest;
    const res = await openStream(gateway.port, { headers: { ...HEADERS, 'Transfer-Encoding': 'chunked' } }, (req) => {
      request = req;
      req.flushHeaders();
      req.write('one');
    });
    expect(res.statusCode).toBe(200);
    expect(await nextChunk(res)).toBe('echo:one');
    // The first echo came back while the request body is still open: nothing was buffered to the end.
    request.write('two');
    expect(await nextChunk(res)).toBe('echo:two');
    const rest = outcome(res);
    request.end();
    expect((await rest).complete).toBe(true);
  });

  it('carries a large body unchanged', async () => {
    const { gateway } = await setup((req, res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      req.on('data', (c: Buffer) => {
        bytes += c.length;
        hash.update(c);
      });
      req.on('end', () => res.end(JSON.stringify({ bytes, sha256: hash.digest('hex') })));
    });
    const payload = randomBytes(8 * 1024 * 1024);
    const reply = await call(gateway.port, { headers: HEADERS, body: payload });
    expect(JSON.parse(reply.body)).toEqual({ bytes: payload.length, sha256: createHash('sha256').update(payload).digest('hex') });
  });

  it('reuses upstream connections (keep-alive pool) across requests', async () => {
    const { gateway, upstream } = await setup((_req, res) => res.end('ok'));
    for (let i = 0; i < 20; i++) expect((await call(gateway.port, { headers: HEADERS })).body).toBe('ok');
    expect(upstream.connections).toBe(1);
  });

  it('answers the next request on a connection whose last response was larger than the client side takes at once', async () => {
    // A body past the response's write buffer, in one piece: the gateway pauses reading the upstream until the
    // client side drains, and the response ends before that. The connection must be reading again for its next call.
    const big = 'x'.repeat(48 * 1024);
    const { gateway, upstream } = await setup((req, res) => res.end(req.url === '/big' ? big : 'small'));
    for (let i = 0; i < 3; i++) {
      expect((await call(gateway.port, { method: 'GET', path: '/big', headers: HEADERS })).body).toBe(big);
      expect((await call(gateway.port, { method: 'GET', path: '/small', headers: HEADERS })).body).toBe('small');
    }
    expect(upstream.connections).toBe(1);
  });

  it('carries a large answer with a length unchanged to a client that reads slowly, then the next answer on the same connection', async () => {
    // The answer's body is taken from the gateway's reused read buffer and its writes wait for a client that does not
    // read: every byte must still arrive, in order, and nothing of it may leak into the next answer.
    const payload = randomBytes(6 * 1024 * 1024);
    const { gateway, upstream } = await setup((req, res) => {
      if (req.url === '/big') {
        res.setHeader('content-length', payload.length);
        res.end(payload);
      } else res.end('small');
    });
    const socket = connect(gateway.port, '127.0.0.1');
    cleanup.add(() => socket.destroy());
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const headers = Object.entries(HEADERS)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`GET /big HTTP/1.1\r\nHost: x\r\n${headers}\r\nGET /small HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
    socket.pause();
    // Long enough for the gateway to fill the client's socket and wait on it.
    await new Promise((r) => setTimeout(r, 500));
    const chunks: Buffer[] = [];
    const received = new Promise<Buffer>((resolve, reject) => {
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        const all = Buffer.concat(chunks);
        if (all.includes('\r\n\r\nsmall')) resolve(all);
      });
      socket.once('error', reject);
      socket.once('close', () => reject(new Error(`closed after ${Buffer.concat(chunks).length} bytes`)));
    });
    socket.resume();
    const all = await received;
    const headEnd = all.indexOf('\r\n\r\n') + 4;
    expect(all.subarray(0, headEnd).toString('latin1')).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\ncontent-length: 6291456\r\n/i);
    const body = all.subarray(headEnd, headEnd + payload.length);
    expect(createHash('sha256').update(body).digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
    const second = all.subarray(headEnd + payload.length).toString('latin1');
    expect(second).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nsmall$/);
    expect(upstream.connections).toBe(1);
  });

  it('removes hop-by-hop headers in both directions and adds Via', async () => {
    const { gateway } = await setup((req, res) => {
      res.setHeader('Connection', 'x-reply-hop');
      res.setHeader('X-Reply-Hop', 'per-connection');
      res.setHeader('X-Reply-End', 'kept');
      res.end(JSON.stringify(req.headers));
    });
    const reply = await call(gateway.port, {
      headers: {
        ...HEADERS,
        Connection: 'keep-alive, X-Hop',
        'X-Hop': 'per-connection',
        'Keep-Alive': 'timeout=3',
        TE: 'trailers',
        'Proxy-Authorization': 'Basic Zm9vOmJhcg==',
        'X-End': 'kept',
      },
    });
    const seen = JSON.parse(reply.body);
    expect(seen['x-end']).toBe('kept');
    expect(seen['x-hop']).toBeUndefined();
    expect(seen.te).toBeUndefined();
    expect(seen['keep-alive']).toBeUndefined();
    expect(seen['proxy-authorization']).toBeUndefined();
    expect(reply.headers['x-reply-end']).toBe('kept');
    expect(reply.headers['x-reply-hop']).toBeUndefined();
    expect(reply.headers.via).toContain('sandbox-kit-gateway');
  });

  it.each([
    ['chunked', {}],
    ['content-length', { 'content-length': '1000' }],
  ])('cuts the client response when the upstream dies mid-stream (%s), and keeps serving', async (_kind, head) => {
    let killUpstream!: () => void;
    const { gateway } = await setup((req, res) => {
      if (req.url === '/healthy') return void res.end('still here');
      res.writeHead(200, head);
      res.write('partial');
      killUpstream = () => req.socket.destroy();
    });
    const res = await openStream(gateway.port, { path: '/dies', headers: HEADERS });
    const result = outcome(res);
    expect(await nextChunk(res)).toBe('partial');
    killUpstream();
    expect(await result).toEqual({ complete: false, body: 'partial' });
    expect((await call(gateway.port, { path: '/healthy', headers: HEADERS })).body).toBe('still here');
  });

  it('answers 502 JSON when the upstream drops the connection before answering', async () => {
    const { gateway, upstream } = await setup((req) => req.socket.destroy());
    const reply = await call(gateway.port, { headers: HEADERS });
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'sb1', message: expect.any(String), port: upstream.port, code: 502 });
  });

  it('stops the upstream call when the client goes away', async () => {
    let upstreamSawClose = false;
    const { gateway } = await setup((_req, res) => {
      res.writeHead(200);
      res.write('tick');
      res.on('close', () => (upstreamSawClose = true));
    });
    const res = await openStream(gateway.port, { headers: HEADERS });
    await nextChunk(res);
    res.destroy();
    await eventually(async () => expect(upstreamSawClose).toBe(true));
  });

  it('cuts a response that outlives Connect-Timeout-Ms', async () => {
    const { gateway } = await setup((_req, res) => {
      res.writeHead(200);
      res.write('started');
    });
    const res = await openStream(gateway.port, { headers: { ...HEADERS, 'Connect-Timeout-Ms': '300' } });
    const result = await outcome(res);
    expect(result).toEqual({ complete: false, body: 'started' });
  });

  it('lets requests in flight finish when the sandbox is removed from the catalog, and refuses new ones', async () => {
    let finish!: () => void;
    const { gateway, catalog } = await setup((_req, res) => {
      res.writeHead(200);
      res.write('first half,');
      finish = () => res.end('second half');
    });
    const res = await openStream(gateway.port, { headers: HEADERS });
    const result = outcome(res);
    await eventually(async () => expect(finish).toBeDefined());
    await catalog.remove('sb1');
    const after = await call(gateway.port, { headers: HEADERS });
    expect(after.status).toBe(502);
    expect(JSON.parse(after.body)).toEqual({ sandboxID: 'sb1', message: expect.stringContaining('not found'), code: 502 });
    finish();
    expect(await result).toEqual({ complete: true, body: 'first half,second half' });
  });
});
