/**
 * Hostile template build steps (real crun containers from the cached Debian base, as the template builder runs a
 * RUN step): a step tries to reach a listener on the host's loopback and a canary on the host's private address,
 * directly and through the build proxy, and the cloud metadata address; all fail. The same step still installs a
 * Debian package from the mirror through the build proxy, and its files are owned by the user namespace's root.
 * Root only; touches no shared network (each step gets namespaces of its own).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { createStepExecutor, type OciStepExecutor } from '../../src/runtime/step-executor';
import { baseRootfs, ROOTFS_TIMEOUT_MS, uniqueName } from '../integration/runtime/helpers/common';

jest.setTimeout(180_000);

let rootfs: string;
let scratch: string;
let instance: string;
let steps: OciStepExecutor;
let canary: net.Server;
let canaryPort: number;
const roots = () => ({ stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') });

/** The host's own private address (the first non-loopback IPv4 of this machine). */
function hostPrivateAddress(): string {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('this host has no non-loopback IPv4 address');
}

beforeAll(async () => {
  rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/sk-security-build-');
  instance = uniqueName('b');
  steps = createStepExecutor({ instance, ...roots() });
  canary = net.createServer((c) => c.end('HTTP/1.0 200 OK\r\n\r\ncanary-reached\n'));
  await new Promise<void>((resolve) => canary.listen(0, '0.0.0.0', resolve));
  canaryPort = (canary.address() as net.AddressInfo).port;
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  canary?.close();
  await cleanupLeftovers({ instance, ...roots() });
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

async function run(script: string, layerDir = fs.mkdtempSync(path.join(scratch, 'layer-'))) {
  const lines: string[] = [];
  const code = await steps.run({
    layers: [rootfs],
    layerDir,
    argv: ['/bin/bash', '-c', script],
    user: 'root',
    workdir: '/',
    env: {},
    network: 'egress',
    memoryMB: 512,
    cpuCount: 1,
    timeoutMs: 120_000,
    onLine: (_s, line) => lines.push(line),
  });
  return { code, out: lines.join('\n'), layerDir };
}

test("a RUN step reaches neither the host's loopback nor its private address nor the metadata address", async () => {
  const priv = hostPrivateAddress();
  const r = await run(
    [
      `for target in 127.0.0.1 ${priv}; do`,
      `  curl -sS -m 3 --noproxy '*' http://$target:${canaryPort}/ 2>/dev/null; echo "direct $target $?"`,
      // --noproxy '': through the proxy even where no_proxy would go direct (127.0.0.1)
      `  curl -sS -m 5 --noproxy '' http://$target:${canaryPort}/; echo " proxied $target $?"`,
      `  curl -sS -m 5 --noproxy '' https://$target:${canaryPort}/ 2>&1 | tail -1; echo "connect $target"`,
      'done',
      'curl -sS -m 5 http://169.254.169.254/latest/user-data; echo " metadata $?"',
      'ip -o addr show | grep -v " lo " | wc -l',
    ].join('\n'),
  );
  expect(r.out).not.toContain('canary-reached');
  for (const target of ['127.0.0.1', priv]) {
    expect(r.out).toMatch(new RegExp(`^direct ${target.replace(/\./g, '\\.')} 7$`, 'm')); // no route: connection refused
    expect(r.out).toContain(
      `template builds may not reach ${target} (${target}): loopback, private, link-local and metadata destinations are refused\n proxied ${target} 0`,
    );
    expect(r.out).toMatch(new RegExp(`CONNECT tunnel failed, response 403\\nconnect ${target.replace(/\./g, '\\.')}`));
  }
  expect(r.out).toContain('template builds may not reach 169.254.169.254');
  expect(r.out.trim().split('\n').at(-1)).toBe('0'); // only loopback in the step's namespace
  expect(r.code).toBe(0);
});

test('a RUN step still installs a Debian package through the build proxy; its files are owned by the mapped root', async () => {
  const r = await run(
    'apt-get update -qq && apt-get install -y -qq --no-install-recommends jq >/dev/null && jq --version && rm -rf /var/lib/apt/lists/*',
  );
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^jq-1\.6$/m);
  const jq = fs.statSync(path.join(r.layerDir, 'usr/bin/jq'));
  expect([jq.uid, jq.gid]).toEqual([100000, 100000]);
});
