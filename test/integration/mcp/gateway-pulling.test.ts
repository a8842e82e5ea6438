/**
 * A server whose image is still being pulled (the platform attaches it after the create answered): the gateway
 * reports it as `pulling` in its status and in its tools' answers, lists no tools of it, and starts it once its
 * image is there (its tools then announced); a pull that fails turns it `failed` with the reason. Root only (the
 * image's filesystem is the host's root bound read-only, entered with chroot as in a sandbox).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { builtinCatalog } from '../../../src/mcp/catalog/load';
import { parseMcpConfig } from '../../../src/mcp/config/validate';
import { type RunningGateway, startMcpGateway } from '../../../src/mcp/gateway/server';
import { imageKey } from '../../../src/mcp/launch/image-dir';
import { connect, REPO, tempDir, text, waitFor } from './helpers/common';

jest.setTimeout(120_000);

const token = `tok-${Math.random().toString(36).slice(2)}`;
const root = tempDir('skm-mcp-pulling');
const images = path.join(root, 'images');
const rootfs = path.join(images, imageKey('mcp/time'), 'rootfs');
let gateway: RunningGateway;
let client: Client;

beforeAll(async () => {
  for (const ref of ['mcp/time', 'mcp/fetch']) {
    fs.mkdirSync(path.join(images, imageKey(ref)), { recursive: true });
    fs.writeFileSync(path.join(images, imageKey(ref), 'pulling'), `${ref}\n`);
  }
  gateway = await startMcpGateway({
    config: parseMcpConfig({ time: {}, fetch: {} }),
    catalog: builtinCatalog(),
    token,
    port: 0,
    host: '127.0.0.1',
    serversDirs: [REPO],
    imagesDirs: [images],
    stateDir: path.join(root, 'state'),
    log: () => undefined,
  });
  await gateway.settled;
  client = await connect(`http://127.0.0.1:${gateway.port}/mcp`, token);
});

afterAll(async () => {
  await client?.close();
  await gateway?.close();
  if (fs.existsSync(rootfs)) execFileSync('umount', ['-R', '-l', rootfs], { stdio: 'ignore' });
  fs.rmSync(root, { recursive: true, force: true });
});

test('pulling, then ready once the image is there; a failed pull turns the server failed with the reason', async () => {
  expect(gateway.status()).toMatchObject({
    ready: true,
    servers: [
      { name: 'time', state: 'pulling', error: 'image mcp/time is being pulled' },
      { name: 'fetch', state: 'pulling', error: 'image mcp/fetch is being pulled' },
    ],
  });
  expect((await client.listTools()).tools).toEqual([]);
  const early = await client.callTool({ name: 'time__echo', arguments: { message: 'too early' } });
  expect(early.isError).toBe(true);
  expect(text(early)).toBe('server time is pulling: image mcp/time is being pulled; its tools are listed once it has started');

  // The platform attaches the image (here: the host's root, read-only, running the npm everything server) and says what runs.
  fs.mkdirSync(rootfs);
  execFileSync('mount', ['--bind', '-o', 'ro', '/', rootfs]);
  const server = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  fs.writeFileSync(
    path.join(images, imageKey('mcp/time'), 'image.json'),
    JSON.stringify({ ref: 'mcp/time', entrypoint: [process.execPath, server], cmd: ['stdio'], env: ['PATH=/usr/bin:/bin'] }),
  );
  fs.rmSync(path.join(images, imageKey('mcp/time'), 'pulling'));
  const names = await waitFor('the time server to start', async () => {
    const listed = (await client.listTools()).tools.map((t) => t.name);
    return listed.includes('time__echo') ? listed : undefined;
  });
  expect(names.every((n) => n.startsWith('time__'))).toBe(true);
  expect(text(await client.callTool({ name: 'time__echo', arguments: { message: 'pulled' } }))).toBe('Echo: pulled');
  expect(gateway.status().servers.find((s) => s.name === 'time')).toMatchObject({ state: 'ready' });

  fs.writeFileSync(path.join(images, imageKey('mcp/fetch'), 'error'), 'registry answered 404 for mcp/fetch:latest\n');
  await waitFor('fetch to fail', () => (gateway.status().servers.find((s) => s.name === 'fetch')?.state === 'failed' ? true : undefined));
  const failed = await client.callTool({ name: 'fetch__fetch', arguments: {} });
  expect(text(failed)).toBe('server fetch is failed: image mcp/fetch could not be fetched: registry answered 404 for mcp/fetch:latest');
});
