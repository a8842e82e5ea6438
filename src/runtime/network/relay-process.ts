/**
 * The egress relay of one bridge namespace (egress-relay/main.ts) as a process: started on first need, detached, so
 * it outlives a platform restart (the sandboxes' redirected connections keep their relay), found again by its pid
 * file, stopped with its network. Its directory holds the sandboxes' policy files and its log.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { bundleDir } from '../../util/project-root';
import { signalProcess } from '../../util/signal';
import type { LookupChoice } from './egress-relay/original-destination';
import { RELAY_PORT } from './guard-rules';

export const RELAY_STATE_ROOT = '/run/sandbox-kit/egress-relay';

export function relayDir(bridgeNamespace: string): string {
  return join(RELAY_STATE_ROOT, bridgeNamespace);
}

export function defaultRelayProgram(): string {
  return join(bundleDir(), 'egress-relay.js');
}

/** The pid of the namespace's running relay, if there is one. */
export function runningRelay(bridgeNamespace: string): number | undefined {
  const dir = relayDir(bridgeNamespace);
  try {
    const pid = Number(fs.readFileSync(join(dir, 'relay.pid'), 'utf8'));
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.some((a) => a.endsWith('egress-relay.js')) && cmdline.includes(dir) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts the relay in `bridgeNamespace` unless it runs; resolves once it listens. `originalDestination`: how it reads
 * where redirected connections were going (original-destination.ts); tests force one way, everything else says auto.
 */
export async function ensureRelay(
  bridgeNamespace: string,
  program: string = defaultRelayProgram(),
  originalDestination: LookupChoice = 'auto',
): Promise<void> {
  if (runningRelay(bridgeNamespace) !== undefined) return;
  if (!fs.existsSync(program)) throw new Error(`${program} not found: run 'npm run build' (it bundles the egress relay)`);
  const dir = relayDir(bridgeNamespace);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const logFd = fs.openSync(join(dir, 'relay.log'), 'a', 0o600);
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      bridgeNamespace,
      process.execPath,
      program,
      '--dir',
      dir,
      '--port',
      String(RELAY_PORT),
      '--netns',
      bridgeNamespace,
      '--original-destination',
      originalDestination,
    ],
    { detached: true, stdio: ['ignore', 'pipe', logFd] },
  );
  fs.closeSync(logFd);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('it did not listen within 10 s')), 10_000);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`it exited (${code}); see ${join(dir, 'relay.log')}`)));
      child.stdout?.once('data', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`cannot start the egress relay in ${bridgeNamespace}: ${(err as Error).message}`);
  }
  child.removeAllListeners('exit');
  child.stdout?.destroy();
  child.unref();
  fs.writeFileSync(join(dir, 'relay.pid'), String(child.pid));
}

/** Stops the namespace's relay and removes its directory (idempotent). */
export function stopRelay(bridgeNamespace: string): void {
  const pid = runningRelay(bridgeNamespace);
  if (pid !== undefined) signalProcess(pid, 'SIGKILL');
  fs.rmSync(relayDir(bridgeNamespace), { recursive: true, force: true });
}
