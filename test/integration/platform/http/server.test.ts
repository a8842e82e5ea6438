import { request } from 'node:http';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ApiKeys, loadOrCreateApiKeyFile } from '../../../../src/platform/teams/api-keys';
import { startApiServer, type RunningApiServer } from '../../../../src/platform/http/server';
import { ApiError, type Route } from '../../../../src/platform/http/types';
import { validate } from '../../../../src/platform/http/validate';
import { sameConnectionTwice } from '../../../helpers/same-connection';

const KEY = 'sk_test_key_123456';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw node:http request, so the test controls framing (chunked or Content-Length) exactly. */
function call(base: string, method: string, path: string, opts: { key?: string; chunks?: string[]; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.key !== undefined) headers['x-api-key'] = opts.key;
    if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
    if (opts.chunks !== undefined) headers['transfer-encoding'] = 'chunked';
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString() }));
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    for (const chunk of opts.chunks ?? []) req.write(chunk);
    req.end();
  });
}

describe('startApiServer', () => {
  let server: RunningApiServer;
  const seen: unknown[] = [];
  const routes: Route[] = [
    {
      method: 'POST',
      path: '/things/:thingID',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(z.object({ size: z.number().int().min(1) }).strict(), req.body ?? {}, 'body');
        seen.push({ params: req.params, body, q: req.query.get('q') });
        return { status: 201, body: { id: req.params.thingID, size: body.size } };
      },
    },
    { method: 'DELETE', path: '/things/:thingID', auth: 'api-key', handler: async () => ({ status: 204 }) },
    { method: 'POST', path: '/things/:thingID/empty', auth: 'api-key', handler: async () => ({ status: 202 }) },
    {
      method: 'GET',
      path: '/things/:thingID',
      auth: 'api-key',
      handler: async (req) => {
        if (req.params.thingID === 'gone') throw new ApiError(404, 'thing "gone" does not exist');
        if (req.params.thingID === 'boom') throw new Error('kaput');
        return { status: 200, body: [], headers: { 'x-next-token': 'n1' } };
      },
    },
    { method: 'GET', path: '/open', auth: 'none', handler: async () => ({ status: 200, body: { open: true } }) },
  ];

  beforeAll(async () => {
    server = await startApiServer({ routes, apiKeys: ApiKeys.fromKeys([KEY]), maxBodyBytes: 1024 });
  });
  afterAll(() => server.close());

  it('reads a chunked JSON body, path parameters and the query', async () => {
    const r = await call(server.url, 'POST', '/things/t1?q=z', { key: KEY, chunks: ['{"si', 'ze":', '3}'] });
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.text)).toEqual({ id: 't1', size: 3 });
    expect(seen.at(-1)).toEqual({ params: { thingID: 't1' }, body: { size: 3 }, q: 'z' });
  });

  it('answers an empty 2xx with Content-Length: 0, and 204 with no body', async () => {
    const r = await call(server.url, 'POST', '/things/t1/empty', { key: KEY, chunks: ['{}'] });
    expect(r).toMatchObject({ status: 202, text: '' });
    expect(r.headers['content-length']).toBe('0');
    const d = await call(server.url, 'DELETE', '/things/t1', { key: KEY });
    expect(d).toMatchObject({ status: 204, text: '' });
  });

  it('passes handler headers on', async () => {
    const r = await call(server.url, 'GET', '/things/a', { key: KEY });
    expect(r.headers['x-next-token']).toBe('n1');
  });

  it('refuses a missing or wrong API key with 401 and a JSON body', async () => {
    const missing = await call(server.url, 'GET', '/things/a');
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.text)).toEqual({ code: 401, message: expect.stringContaining('X-API-Key header is missing') });
    const wrong = await call(server.url, 'GET', '/things/a', { key: 'sk_wrong_key_99' });
    expect(JSON.parse(wrong.text)).toEqual({ code: 401, message: expect.stringContaining('no valid API key') });
  });

  it('lets auth: none routes through without a key', async () => {
    expect(JSON.parse((await call(server.url, 'GET', '/open')).text)).toEqual({ open: true });
  });

  it('answers unknown paths 404 and wrong methods 405, as JSON', async () => {
    const nf = await call(server.url, 'GET', '/nope', { key: KEY });
    expect(nf.status).toBe(404);
    expect(JSON.parse(nf.text)).toEqual({ code: 404, message: 'no such endpoint: GET /nope' });
    const na = await call(server.url, 'PUT', '/things/x', { key: KEY, body: '{}' });
    expect(na.status).toBe(405);
    expect(na.headers.allow).toBe('POST, DELETE, GET');
    expect(JSON.parse(na.text).code).toBe(405);
  });

  it('answers malformed JSON with 400 naming the problem', async () => {
    const r = await call(server.url, 'POST', '/things/t1', { key: KEY, chunks: ['{"size":'] });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toEqual({ code: 400, message: expect.stringContaining('not valid JSON') });
  });

  it('answers wrong types with 400 naming the field and the value given', async () => {
    const r = await call(server.url, 'POST', '/things/t1', { key: KEY, body: '{"size":"3"}' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).message).toContain('body field "size"');
    expect(JSON.parse(r.text).message).toContain('(given "3")');
  });

  it('refuses bodies over the limit, declared or chunked, with 413', async () => {
    const declared = await call(server.url, 'POST', '/things/t1', { key: KEY, body: `{"size":1,"pad":"${'x'.repeat(2000)}"}` });
    expect(declared.status).toBe(413);
    const chunked = await call(server.url, 'POST', '/things/t1', {
      key: KEY,
      chunks: ['{"pad":"', 'x'.repeat(600), 'x'.repeat(600), '"}'],
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.text)).toEqual({ code: 413, message: 'the request body is larger than 1024 bytes' });
  });

  // The SDKs' fetch keeps an idle connection 4 s on its own clock (or the time advertised, less 2 s): a client busy
  // longer sends its next request into the connection it kept, so the server must not have closed it.
  it('keeps an idle keep-alive connection across a 6 s pause and says how long it keeps one', async () => {
    const port = Number(new URL(server.url).port);
    const { first, second } = await sameConnectionTwice(port, 'GET /open HTTP/1.1\r\nHost: x\r\n\r\n', '{"open":true}', 6_000);
    expect(first).toMatch(/\r\nKeep-Alive: timeout=65\r\n/);
    expect(second).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"open":true\}$/);
  }, 20_000);

  it('maps an ApiError to its status and an unexpected error to 500', async () => {
    const gone = await call(server.url, 'GET', '/things/gone', { key: KEY });
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.text)).toEqual({ code: 404, message: 'thing "gone" does not exist' });
    const boom = await call(server.url, 'GET', '/things/boom', { key: KEY });
    expect(boom.status).toBe(500);
    expect(JSON.parse(boom.text)).toEqual({ code: 500, message: 'internal error: kaput' });
  });
});

describe('loadOrCreateApiKeyFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sk-keys-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('generates a key into a new 0600 file, then reads the same key back', async () => {
    const path = join(dir, 'sub', 'api-key');
    const first = await loadOrCreateApiKeyFile(path);
    expect(first.generated).toBe(true);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await readFile(path, 'utf8')).trim()).toBe(first.keys[0]);
    const second = await loadOrCreateApiKeyFile(path);
    expect(second).toEqual({ keys: first.keys, generated: false });
  });

  it('reads a given file and reports a bad one', async () => {
    const path = join(dir, 'keys');
    await writeFile(path, 'bad\n');
    await expect(loadOrCreateApiKeyFile(path)).rejects.toThrow(`API key file ${path}: line 1`);
  });
});
