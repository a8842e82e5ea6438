import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setAttributeSync } from '@napi-rs/xattr';
import { bundle, bundleEntries, xattrBindingPackage } from '../../../scripts/bundle';
import { agentNodeFlags } from '../../../src/runtime/agent-payload';

/**
 * The agent runs the host's node inside the template's file system. Whatever that file system says about its C
 * library (a `/usr/bin/ldd` of Alpine's, naming musl), the agent loads the xattr binding of the node that runs it:
 * before, it looked for a musl binding no bundle has and did not start at all. Root only (a mount namespace of
 * its own, in which `/usr/bin/ldd` is an Alpine one; it goes with the agent's process).
 */
describe('the agent in a template whose /usr/bin/ldd names musl', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-agent-libc-'));
    await bundle(bundleEntries().find((e) => e.name === 'agent')!, dir);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts, and reads and shows a file's metadata through its xattr binding", async () => {
    const ldd = join(dir, 'alpine-ldd');
    writeFileSync(ldd, '#!/bin/sh\nexec /lib/ld-musl-x86_64.so.1 --list -- "$@"\n', { mode: 0o755 });
    const file = join(dir, 'with-metadata');
    writeFileSync(file, 'x');
    setAttributeSync(file, 'user.svc.owner', 'team-a');
    const node = [process.execPath, ...agentNodeFlags()];
    const agent = [...node, join(dir, 'run.js'), 'agent', '--host', '127.0.0.1', '--port', '0'];
    const script = 'mount --bind "$0" /usr/bin/ldd && grep -q musl /usr/bin/ldd && exec "$@"';
    const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, ldd, ...agent], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {},
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        const take = (d: Buffer) => {
          const m = /listening on [^\s]*:(\d+)/.exec((out += d.toString()));
          if (m) resolve(Number(m[1]));
        };
        child.stdout.on('data', take);
        child.stderr.on('data', take);
        child.on('exit', (code) => reject(new Error(`the agent exited (${code}) before it listened: ${out}`)));
      });
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(204);
      const stat = await fetch(`http://127.0.0.1:${port}/filesystem.Filesystem/Stat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
        body: JSON.stringify({ path: file }),
      });
      expect(stat.status).toBe(200);
      expect(((await stat.json()) as { entry: { metadata?: Record<string, string> } }).entry.metadata).toEqual({ owner: 'team-a' });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('names the binding of this platform, CPU and C library as the package that holds it', () => {
    expect(xattrBindingPackage('linux', 'x64', 'gnu')).toBe('@napi-rs/xattr-linux-x64-gnu');
    expect(xattrBindingPackage('linux', 'arm64', 'musl')).toBe('@napi-rs/xattr-linux-arm64-musl');
    expect(xattrBindingPackage('darwin', 'arm64', 'gnu')).toBe('@napi-rs/xattr-darwin-arm64');
  });
});
