/**
 * One context's kernel as a child process (kernel-bridge.py for python and bash, js-kernel.ts for javascript):
 * requests go in as JSON lines on its stdin, events come back as JSON lines on its fd 3, SIGINT interrupts it.
 * Its own stdout and stderr go to the server's log.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { KernelEvent } from './wire';

type Message = (KernelEvent & { id?: number }) | { type: 'ready' } | { type: 'done'; id: number; dead?: boolean };

/** How an execution ended: `dead` when the kernel went away during it (its error was reported). */
export type Outcome = 'done' | 'dead';

interface Running {
  id: number;
  onEvent(event: KernelEvent): void;
  finish(outcome: Outcome): void;
}

const READY_TIMEOUT_MS = 120_000;

export class KernelProcess {
  private readonly child: ChildProcess;
  private running: Running | undefined;
  private nextId = 1;
  private exit: string | undefined;
  /** Resolves once the kernel answers; rejects when it exits first or takes too long. */
  readonly ready: Promise<void>;

  constructor(argv: string[], cwd: string) {
    this.child = spawn(argv[0], argv.slice(1), { cwd, stdio: ['pipe', 'inherit', 'inherit', 'pipe'] });
    let markReady: () => void = () => undefined;
    let failReady: (err: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    this.ready.catch(() => undefined);
    const timer = setTimeout(() => {
      failReady(new Error(`the kernel did not start within ${READY_TIMEOUT_MS / 1000} s`));
      this.close();
    }, READY_TIMEOUT_MS);
    createInterface({ input: this.child.stdio[3] as Readable }).on('line', (line) => {
      let msg: Message;
      try {
        msg = JSON.parse(line) as Message;
      } catch {
        return;
      }
      if (msg.type === 'ready') {
        clearTimeout(timer);
        markReady();
      } else if (msg.type === 'done') {
        if (this.running?.id === msg.id) this.running.finish(msg.dead ? 'dead' : 'done');
      } else if (this.running !== undefined && msg.id === this.running.id) {
        this.running.onEvent(msg);
      }
    });
    this.child.on('error', (err) => this.exited(`could not start: ${err.message}`, failReady, timer));
    this.child.on('exit', (code, signal) =>
      this.exited(signal ? `was killed by ${signal}` : `exited with status ${code}`, failReady, timer),
    );
    this.child.stdin?.on('error', () => undefined);
  }

  private exited(how: string, failReady: (err: Error) => void, timer: NodeJS.Timeout): void {
    if (this.exit !== undefined) return;
    this.exit = how;
    clearTimeout(timer);
    failReady(new Error(`the kernel ${how} before it was ready`));
    const running = this.running;
    if (running !== undefined) {
      running.onEvent({
        type: 'error',
        name: 'KernelDied',
        value: `the kernel ${how}; the context's state is lost and a new kernel starts`,
        traceback: `KernelDied: the kernel ${how}`,
      });
      running.finish('dead');
    }
  }

  /** Why the kernel is gone, or undefined while it lives. */
  get gone(): string | undefined {
    return this.exit;
  }

  /** Runs one piece of code; one at a time (the context queues them). */
  run(code: string, envs: Record<string, string>, onEvent: (event: KernelEvent) => void): Promise<Outcome> {
    if (this.running !== undefined) throw new Error('the kernel is busy');
    if (this.exit !== undefined) {
      // A kernel that could not start (or died idle): the run says so rather than ending silently.
      onEvent({ type: 'error', name: 'KernelDied', value: `the kernel ${this.exit}`, traceback: `KernelDied: the kernel ${this.exit}` });
      return Promise.resolve('dead');
    }
    const id = this.nextId++;
    return new Promise<Outcome>((resolve) => {
      this.running = {
        id,
        onEvent,
        finish: (outcome) => {
          this.running = undefined;
          resolve(outcome);
        },
      };
      this.child.stdin?.write(`${JSON.stringify({ id, code, envs })}\n`);
    });
  }

  /** Interrupts what runs (a KeyboardInterrupt in Python, Ctrl-C in bash); the kernel and its state stay. */
  interrupt(): void {
    if (this.exit === undefined) this.child.kill('SIGINT');
  }

  /** Stops the kernel: SIGTERM, SIGKILL after a grace period. */
  close(graceMs = 3000): Promise<void> {
    if (this.exit !== undefined) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.stdin?.end();
      this.child.kill('SIGTERM');
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}
