/**
 * The javascript kernel: a Node process (the sandbox's payload node) that runs each piece of code in one global
 * scope kept between runs, like a REPL. Same pipes as kernel-bridge.py: requests on stdin, events on fd 3. SIGINT
 * stops synchronous code (V8's breakOnSigint) and a promise still pending.
 */
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { format, inspect } from 'node:util';
import { runInThisContext } from 'node:vm';
import type { KernelEvent } from './wire';

const EVENTS_FD = 3;

function emit(message: object): void {
  writeSync(EVENTS_FD, `${JSON.stringify(message)}\n`);
}

let current: number | undefined;
let interruptPending: ((err: Error) => void) | undefined;

function send(event: KernelEvent): void {
  // Output of timers that fire after their run ended has no run to go to.
  if (current !== undefined) emit({ id: current, ...event });
}

function capturingConsole(): Console {
  const out = (...args: unknown[]) => send({ type: 'stdout', text: `${format(...args)}\n` });
  const err = (...args: unknown[]) => send({ type: 'stderr', text: `${format(...args)}\n` });
  return Object.assign(Object.create(console) as Console, { log: out, info: out, debug: out, error: err, warn: err, trace: err });
}

/** The stack down to the cell: the kernel's own frames below it say nothing about the user's code. */
function cellStack(err: Error): string {
  const lines = (err.stack ?? String(err)).split('\n');
  const inside = lines.findIndex((l) => l.includes('node:vm'));
  return (inside > 0 ? lines.slice(0, inside) : lines).join('\n');
}

function interrupted(): Error {
  const err = new Error('the execution was interrupted');
  err.name = 'KeyboardInterrupt';
  return err;
}

async function runOne(id: number, code: string, envs: Record<string, string>, count: number): Promise<void> {
  current = id;
  send({ type: 'count', n: count });
  const saved = Object.fromEntries(Object.keys(envs).map((k) => [k, process.env[k]]));
  Object.assign(process.env, envs);
  try {
    let value = runInThisContext(code, { filename: `<cell ${count}>`, breakOnSigint: true, displayErrors: false });
    if (value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function') {
      value = await new Promise((resolve, reject) => {
        interruptPending = reject;
        (value as PromiseLike<unknown>).then(resolve, reject);
      });
    }
    if (value !== undefined) send({ type: 'result', data: { 'text/plain': inspect(value) }, main: true });
  } catch (thrown) {
    const err = thrown instanceof Error ? thrown : new Error(inspect(thrown));
    const isInterrupt = /interrupted by `?SIGINT/i.test(err.message);
    const shown = isInterrupt ? interrupted() : err;
    send({ type: 'error', name: shown.name, value: shown.message, traceback: isInterrupt ? shown.message : cellStack(err) });
  } finally {
    interruptPending = undefined;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    emit({ id, type: 'done' });
    current = undefined;
  }
}

export function runJsKernel(cwd: string): void {
  process.chdir(cwd);
  const g = globalThis as Record<string, unknown>;
  g.require = createRequire(join(cwd, 'index.js'));
  g.console = capturingConsole();
  // Outside synchronous code (breakOnSigint covers that), SIGINT rejects what is awaited; idle, it does nothing.
  process.on('SIGINT', () => interruptPending?.(interrupted()));
  process.on('SIGTERM', () => process.exit(0));
  let count = 0;
  let queue = Promise.resolve();
  createInterface({ input: process.stdin }).on('line', (line) => {
    const request = JSON.parse(line) as { id: number; code: string; envs?: Record<string, string> };
    queue = queue.then(() => runOne(request.id, request.code, request.envs ?? {}, ++count));
  });
  process.stdin.on('end', () => process.exit(0));
  emit({ type: 'ready' });
}
