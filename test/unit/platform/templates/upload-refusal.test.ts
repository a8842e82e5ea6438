/**
 * An upload refused while the client still sends it: the platform's API server and the kit's upload store on one
 * side, the fetch the E2B SDK uploads with (undici, a streamed body with `duplex: 'half'`, as its putFileStream) on
 * the other. The client gets the refusal with its message in the status line (all the SDK shows of it), not a
 * broken connection, and nothing is kept; an upload within the bound is stored.
 */
import { createReadStream } from 'node:fs';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fetch } from 'undici';
import { reasonPhrase, type RunningApiServer, startApiServer } from '../../../../src/platform/http/server';
import { saveUpload, TooLargeError } from '../../../../src/platform/templates/files';

const MIB = 1024 * 1024;
let dir: string;
let server: RunningApiServer;

beforeAll(async () => {
  dir = fs.mkdtempSync(join(tmpdir(), 'sk-upload-refusal-'));
  server = await startApiServer({
    apiKeys: { check: () => ({ ok: false, status: 401, message: 'no keys here' }) },
    routes: [
      {
        method: 'PUT',
        path: '/upload/:max',
        auth: 'none',
        rawBody: true,
        async handler(req) {
          try {
            await saveUpload(join(dir, 'files'), 'h', req.raw, Number(req.params.max));
          } catch (err) {
            if (!(err instanceof TooLargeError)) throw err;
            const message = `upload refused: larger than the room × 2; nothing was kept`;
            return { status: 429, body: { code: 429, message }, reason: message };
          }
          return { status: 201 };
        },
      },
    ],
  });
  // A tar of 64 MiB (one file): what the SDK spools and then streams.
  const tar = join(dir, 'ctx.tar');
  fs.mkdirSync(join(dir, 'ctx'));
  fs.writeFileSync(join(dir, 'ctx', 'big'), Buffer.alloc(64 * MIB, 1));
  const { execFileSync } = await import('node:child_process');
  execFileSync('tar', ['-cf', tar, '-C', join(dir, 'ctx'), 'big']);
});

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The SDK's upload: the file streamed as the body, its length declared. */
function put(max: number) {
  const tar = join(dir, 'ctx.tar');
  return fetch(`${server.url}/upload/${max}`, {
    method: 'PUT',
    body: Readable.toWeb(createReadStream(tar)) as ReadableStream,
    headers: { 'Content-Length': String(fs.statSync(tar).size) },
    duplex: 'half',
  });
}

test('a refusal mid-body reaches the client with its message in the status line; nothing is kept; within the bound it is stored', async () => {
  for (let i = 0; i < 3; i++) {
    const res = await put(MIB);
    expect(res.status).toBe(429);
    expect(res.statusText).toBe('upload refused: larger than the room x 2; nothing was kept');
    expect(await res.json()).toEqual({ code: 429, message: 'upload refused: larger than the room × 2; nothing was kept' });
    expect(fs.readdirSync(join(dir, 'files'))).toEqual([]);
  }
  const res = await put(128 * MIB);
  expect(res.status).toBe(201);
  expect(fs.readdirSync(join(dir, 'files'))).toEqual(['h.tar']);
});

test('a reason phrase keeps printable ASCII and tabs; other characters become ?, × becomes x', () => {
  expect(reasonPhrase('a\tb × c\r\nd é')).toBe('a\tb x c??d ?');
  expect(reasonPhrase('x'.repeat(600))).toHaveLength(512);
});
