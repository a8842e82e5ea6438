/**
 * An image server its template lacks is pulled after the create answered: on the real platform (OCI runtime, agent,
 * template service, storage collector) with the kit's gateway in front, the unmodified E2B SDK's
 * `Sandbox.create({ mcp })` returns while the lab's registry holds the image's layer back; the sandbox's MCP gateway
 * reports the server as `pulling`; once the layer is let through, the MCP SDK client lists and calls its tools through
 * the kit's gateway. After a pause to disk and a resume the image is attached again and the SDK's gateway process
 * runs again; a fork and a sandbox made from a snapshot have the image attached and their gateway running, and the
 * snapshot holds the image's layers against the storage collector until it is deleted. A registry that fails is
 * reported with the reason in the status and the tools' answers while the sandbox keeps working; a kill during a pull
 * leaves no pull, mount or hold behind. Root only; one link into the root network namespace on a /24 of its own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { startPlatformOnHost, type PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { runScript } from './helpers/node-script';
import { text, waitFor } from './helpers/common';
import { type KitOpts, mcpClient, sandboxToken, sdk as sdkWith, serverStates } from './helpers/kit-client';
import { type LabRegistry, pushEverythingImage, type RegistryGate, startLabRegistry, startRegistryGate } from './helpers/lab-registry';

jest.setTimeout(900_000);

/** Bounds a hang only: a pull of the test image takes seconds. */
const PULL_DEADLINE_MS = 240_000;

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let registry: LabRegistry;
let gate: RegistryGate;
let opts: KitOpts;
const made: string[] = [];
const sdk = (request: Record<string, unknown>) => sdkWith(opts, request);

/** One storage collection now: what it skipped. */
async function collect(): Promise<string[]> {
  const res = await fetch(`${opts.apiUrl}/admin/gc`, { method: 'POST', headers: { 'x-api-key': opts.apiKey } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { skipped: string[] }).skipped;
}

/** The image store's unpacked layers (the pulls' and the attached images'). */
const storeLayers = () => {
  const dir = path.join(stateDir, 'images', 'layers');
  return fs.existsSync(dir) ? fs.readdirSync(dir).flatMap((m) => fs.readdirSync(path.join(dir, m))) : [];
};

beforeAll(async () => {
  await baseRootfs();
  for (const entry of bundleEntries()) await bundle(entry);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-pull-'));
  // The lab's registry stands in for Docker Hub, behind a gate the tests hold and fail: it has `mcp/time`, built
  // here from the npm `everything` server; the other catalog images are not there.
  registry = await startLabRegistry();
  pushEverythingImage(registry.host, 'mcp/time:latest');
  gate = await startRegistryGate(registry.host);
  platform = await startPlatformOnHost({
    stateDir,
    log: (line) => process.stderr.write(`platform: ${line}\n`),
    mcpImages: { mirror: gate.host },
    // Collected only when a test asks (POST /admin/gc), and then whatever nothing references or holds goes.
    gc: { intervalSeconds: 0, keepUnusedSeconds: 0 },
  });
  gateway = await startGateway({ catalog: platform.catalog });
  opts = { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
  // The SDK's default template for `mcp`, bare: the gateway command and no server, so every image is pulled.
  const build = await runScript(path.join(__dirname, 'helpers', 'build-bare-gateway.ts'), [platform.url, platform.apiKey, 'mcp-gateway']);
  const line = build.stdout.split('\n').find((l) => l.startsWith('{'));
  if (!line || !JSON.parse(line).ok) throw new Error(`building the bare mcp-gateway template failed: ${line ?? build.stderr}`);
}, ROOTFS_TIMEOUT_MS + 600_000);

afterAll(async () => {
  for (const id of made) await sdk({ op: 'kill', sandboxId: id }).catch(() => undefined);
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  await gate?.close();
  await registry?.close();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

async function create(mcp: Record<string, unknown>): Promise<{ sandboxId: string; mcpToken: string; token: string }> {
  const created = await sdk({ op: 'create', mcp });
  if (!created.ok) throw new Error(`create failed: ${created.name}: ${created.message}`);
  const { sandboxId, mcpToken } = created.value as { sandboxId: string; mcpToken: string };
  made.push(sandboxId);
  return { sandboxId, mcpToken, token: await sandboxToken(opts, sandboxId) };
}

async function run(sandboxId: string, cmd: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await sdk({ op: 'run', sandboxId, cmd });
  if (!r.ok) throw new Error(`run ${cmd}: ${r.name}: ${r.message}`);
  return r.value;
}

/** The server's state in the sandbox gateway's status once it is `state`. */
const serverIn = (s: { sandboxId: string; mcpToken: string }, name: string, state: string) =>
  waitFor(
    `${name} to be ${state}`,
    async () => (await serverStates(opts, s.sandboxId, s.mcpToken))?.find((x) => x.name === name && x.state === state),
    PULL_DEADLINE_MS,
  );

test('Sandbox.create({ mcp }) answers while the image layer is held; the server is pulling, then listed and called; after a pause to disk it is attached again', async () => {
  await gate.hold('mcp/time');
  const s = await create({ time: {} });
  // The create has answered; the registry still holds the layer the pull asks for.
  await waitFor('the pull to ask for the held layer', () => (gate.waiting('mcp/time') > 0 ? true : undefined), PULL_DEADLINE_MS);
  expect((await serverStates(opts, s.sandboxId, s.mcpToken))?.find((x) => x.name === 'time')).toMatchObject({ state: 'pulling' });
  const early = await mcpClient(opts, s.sandboxId, s.token, s.mcpToken);
  try {
    expect((await early.listTools()).tools.filter((t) => t.name.startsWith('time__'))).toEqual([]);
    const answer = await early.callTool({ name: 'time__echo', arguments: { message: 'too soon' } });
    expect(answer.isError).toBe(true);
    expect(text(answer)).toMatch(/^server time is pulling: /);
  } finally {
    await early.close();
  }
  // Attacking the marker: the attach dir is the host's to write, read-only inside even for the sandbox's root.
  const forge = await run(s.sandboxId, 'echo forged > /run/mcp-images/mcp_time/error');
  expect(forge.exitCode).not.toBe(0);
  expect(forge.stderr).toMatch(/Read-only file system/);

  gate.release('mcp/time');
  await serverIn(s, 'time', 'ready');
  const client = await mcpClient(opts, s.sandboxId, s.token, s.mcpToken);
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['time__echo', 'time__get-sum']));
    expect(text(await client.callTool({ name: 'time__echo', arguments: { message: 'pulled after create' } }))).toBe(
      'Echo: pulled after create',
    );
  } finally {
    await client.close();
  }
  expect((await run(s.sandboxId, 'ls /run/mcp-images/mcp_time')).stdout.split('\n').filter(Boolean).sort()).toEqual([
    'image.json',
    'rootfs',
  ]);
  // The sandbox's record names the image's layers: a collection that removes everything unreferenced keeps them.
  const layers = storeLayers();
  expect(layers.length).toBeGreaterThan(0);
  expect(await collect()).toEqual([]);
  expect(storeLayers()).toEqual(layers);

  // Pause to disk ends every process (the gateway too) and unmounts what was attached; the resume (the SDK's
  // connect) attaches it again and starts the gateway again with its config and token: nothing is launched here.
  expect(await sdk({ op: 'pause', sandboxId: s.sandboxId })).toMatchObject({ ok: true, value: true });
  expect(await sdk({ op: 'mcpToken', sandboxId: s.sandboxId })).toEqual({ ok: true, value: s.mcpToken });
  const resumed = await mcpClient(opts, s.sandboxId, s.token, s.mcpToken);
  try {
    expect(text(await resumed.callTool({ name: 'time__echo', arguments: { message: 'after resume' } }))).toBe('Echo: after resume');
  } finally {
    await resumed.close();
  }
  expect((await run(s.sandboxId, 'test -e /run/mcp-images/mcp_time/pulling; echo $?')).stdout.trim()).toBe('1');
  // A gateway stopped on purpose stays stopped at the next resume.
  const stop = [
    `for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q 'mcp-gateway.js [s]erve' && kill -TERM \${p#/proc/}; done`,
    // Its orderly stop removes what a restart would start it from.
    'while test -e /run/mcp-gateway/daemon.json; do sleep 0.1; done',
    'echo stopped',
  ].join('; ');
  expect((await run(s.sandboxId, stop)).stdout).toBe('stopped\n');
  expect(await sdk({ op: 'pause', sandboxId: s.sandboxId })).toMatchObject({ ok: true, value: true });
  expect(await run(s.sandboxId, 'echo resumed')).toMatchObject({ exitCode: 0, stdout: 'resumed\n' });
  expect(await serverStates(opts, s.sandboxId, s.mcpToken)).toBeUndefined();
});

test('a fork and a sandbox made from a snapshot have the image server attached, their gateway runs; the snapshot holds its layers', async () => {
  const s = await create({ time: {} });
  await serverIn(s, 'time', 'ready');
  const snapshot = await sdk({ op: 'snapshot', sandboxId: s.sandboxId });
  expect(snapshot).toMatchObject({ ok: true });
  const snapshotId = snapshot.value as string;
  const forked = await sdk({ op: 'fork', sandboxId: s.sandboxId });
  expect(forked).toMatchObject({ ok: true, value: [expect.stringMatching(/^[a-z0-9]+$/)] });
  const forkId = (forked.value as string[])[0]!;
  made.push(forkId);

  /** The image server answers in `id` through the MCP SDK client, with the token the SDK reads in it. */
  const served = async (id: string, message: string) => {
    const token = await sdk({ op: 'mcpToken', sandboxId: id });
    expect(token).toEqual({ ok: true, value: s.mcpToken });
    const client = await mcpClient(opts, id, await sandboxToken(opts, id), s.mcpToken);
    try {
      expect(text(await client.callTool({ name: 'time__echo', arguments: { message } }))).toBe(`Echo: ${message}`);
    } finally {
      await client.close();
    }
    // The attached image is the host's, read-only to the sandbox's root there too.
    const forge = await run(id, 'echo forged > /run/mcp-images/mcp_time/error');
    expect(forge.exitCode).not.toBe(0);
  };
  await served(forkId, 'from the fork');

  // Nothing but the snapshot needs the image now: a collection that removes everything unreferenced keeps it.
  for (const id of made.splice(0)) await sdk({ op: 'kill', sandboxId: id });
  const layers = storeLayers();
  expect(layers.length).toBeGreaterThan(0);
  expect(await collect()).toEqual([]);
  expect(storeLayers()).toEqual(layers);

  const fromSnapshot = await sdk({ op: 'create', template: snapshotId });
  expect(fromSnapshot).toMatchObject({ ok: true });
  const fromId = (fromSnapshot.value as { sandboxId: string }).sandboxId;
  made.push(fromId);
  await served(fromId, 'from the snapshot');
  for (const id of made.splice(0)) await sdk({ op: 'kill', sandboxId: id });
  expect(await sdk({ op: 'deleteSnapshot', snapshotId })).toMatchObject({ ok: true, value: true });
  // With the snapshot gone nothing holds them.
  await collect();
  expect(storeLayers()).toEqual([]);
});

test('a registry that fails after the create answered: the status and the tool answers name the reason; the sandbox keeps working', async () => {
  await gate.hold('mcp/fetch');
  const s = await create({ fetch: {} });
  await waitFor('the pull to reach the registry', () => (gate.waiting('mcp/fetch') > 0 ? true : undefined), PULL_DEADLINE_MS);
  expect((await serverStates(opts, s.sandboxId, s.mcpToken))?.find((x) => x.name === 'fetch')).toMatchObject({ state: 'pulling' });
  gate.fail('mcp/fetch');
  const failed = await serverIn(s, 'fetch', 'failed');
  const reason = /could not be fetched: 127\.0\.0\.1:\d+\/mcp\/fetch: .*(503|[Uu]navailable)/;
  expect(failed.error).toMatch(reason);
  const client = await mcpClient(opts, s.sandboxId, s.token, s.mcpToken);
  try {
    const answer = await client.callTool({ name: 'fetch__fetch', arguments: { url: 'http://example.invalid/' } });
    expect(answer.isError).toBe(true);
    expect(text(answer)).toMatch(/^server fetch is failed: /);
    expect(text(answer)).toMatch(reason);
  } finally {
    await client.close();
  }
  expect(await run(s.sandboxId, 'echo still here')).toMatchObject({ exitCode: 0, stdout: 'still here\n' });
});

test('a kill during a pull leaves no pull, mount or hold behind', async () => {
  await gate.hold('mcp/duckduckgo');
  const s = await create({ duckduckgo: {} });
  await waitFor('the pull to reach the registry', () => (gate.waiting('mcp/duckduckgo') > 0 ? true : undefined), PULL_DEADLINE_MS);
  expect(await sdk({ op: 'kill', sandboxId: s.sandboxId })).toMatchObject({ ok: true });
  // The pull's registry operation ended with the kill: its held request was closed, no skopeo of it runs.
  await waitFor('the held request to close', () => (gate.waiting('mcp/duckduckgo') === 0 ? true : undefined), 30_000);
  const pulls = fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        return '';
      }
    })
    .filter((cmd) => cmd.includes(`${gate.host}/mcp/duckduckgo`));
  expect(pulls).toEqual([]);
  expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(s.sandboxId);
  // Nothing holds the image store: a collection goes through it instead of leaving it for a pull under way.
  expect(await collect()).toEqual([]);
});
