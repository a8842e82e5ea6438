import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

export interface ThrowawayRedis {
  port: number;
  url: string;
  /** Stops the server and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

function waitForReady(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server on ${port} not ready after 10 s:\n${output}`)), 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null) => fail(new Error(`redis-server exited with ${code}:\n${output}`));
    const fail = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', fail);
    };
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', fail);
  });
}

/**
 * Starts a private redis-server (never the system one) on a free loopback port, with no persistence,
 * in its own temporary directory. Retries on the rare race where the free port is taken meanwhile.
 */
export async function startRedis(): Promise<ThrowawayRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'sk-redis-'));
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--daemonize',
        'no',
        '--loglevel',
        'notice',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      await waitForReady(child, port);
    } catch (err) {
      lastError = err;
      child.kill('SIGKILL');
      continue;
    }
    let stopped: Promise<void> | undefined;
    return {
      port,
      url: `redis://127.0.0.1:${port}`,
      stop() {
        stopped ??= (async () => {
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
            child.kill('SIGTERM');
            const forced = setTimeout(() => child.kill('SIGKILL'), 3000);
            await exited;
            clearTimeout(forced);
          }
          await rm(dir, { recursive: true, force: true });
        })();
        return stopped;
      },
    };
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}
