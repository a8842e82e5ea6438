/**
 * The lab's OCI registry: Debian's `docker-registry` (the CNCF distribution server) on loopback, storing on disk, with
 * htpasswd (bcrypt) users when asked. Image tests push to it and the template builder pulls from it; being on
 * loopback, it speaks plain HTTP, as Docker allows there. `stop()` ends the process and removes its storage.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { execOk } from '../util/exec';

export interface LabRegistry {
  /** `127.0.0.1:<port>`: the registry part of an image reference. */
  host: string;
  /** The registry's storage (its blobs under docker/registry/v2/blobs). */
  storageDir: string;
  /** The storage file of a blob (`sha256:...`), e.g. to damage it in a test. */
  blobFile(digest: string): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function config(storage: string, port: number, htpasswd?: string): string {
  const lines = [
    'version: 0.1',
    'log:',
    '  level: warn',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${storage}`,
    'http:',
    `  addr: 127.0.0.1:${port}`,
    '  secret: lab-registry',
  ];
  if (htpasswd) lines.push('auth:', '  htpasswd:', '    realm: lab-registry', `    path: ${htpasswd}`);
  return `${lines.join('\n')}\n`;
}

/** Starts a registry under `dir` (made if missing); with `users`, every request needs one of them. */
export async function startLabRegistry(o: { dir: string; users?: Record<string, string>; timeoutMs?: number }): Promise<LabRegistry> {
  fs.mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  const storageDir = path.join(o.dir, 'storage');
  let htpasswd: string | undefined;
  if (o.users) {
    htpasswd = path.join(o.dir, 'htpasswd');
    const entries: string[] = [];
    for (const [user, password] of Object.entries(o.users)) entries.push((await execOk(['htpasswd', '-Bbn', user, password])).trim());
    fs.writeFileSync(htpasswd, `${entries.join('\n')}\n`, { mode: 0o600 });
  }
  const port = await freePort();
  const configFile = path.join(o.dir, 'config.yml');
  fs.writeFileSync(configFile, config(storageDir, port, htpasswd));
  const log = fs.openSync(path.join(o.dir, 'registry.log'), 'a');
  const child: ChildProcess = spawn('docker-registry', ['serve', configFile], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const host = `127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(o.dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + (o.timeoutMs ?? 15_000);
  for (;;) {
    const status = await fetch(`http://${host}/v2/`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200 || status === 401) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      const why = fs.readFileSync(path.join(o.dir, 'registry.log'), 'utf8').trim().split('\n').slice(-3).join(' | ');
      await stop();
      throw new Error(
        `the lab registry did not start on ${host}: ${why || 'no output'} (is docker-registry installed? bash scripts/setup-host.sh)`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    host,
    storageDir,
    blobFile: (digest) => {
      const hex = digest.replace(/^sha256:/, '');
      return path.join(storageDir, 'docker', 'registry', 'v2', 'blobs', 'sha256', hex.slice(0, 2), hex, 'data');
    },
    stop,
  };
}
