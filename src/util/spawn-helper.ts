/**
 * A spawn helper for a long-running process with a large heap (the platform): a small node process of its own
 * (spawn-helper-main.ts, bundled as dist/bundle/spawn-helper.js) that starts host commands on its behalf.
 *
 * Why: node starts a child by forking, and a fork copies the page tables of the whole process. Measured on a
 * 2-core host, one spawn took the platform's event loop 3.5 ms at 85 MiB RSS and 5.5 ms at 130 MiB, growing with the
 * sandboxes it keeps, and a sandbox's create runs about a dozen commands. The helper forks from ~40 MiB, on its own
 * loop; the platform pays one IPC message each way.
 *
 * The helper starts on the first command and again after it exits. A command whose helper exits before answering
 * resolves with HELPER_LOST: it may or may not have run, as with a command whose runtime died. A command given no
 * environment of its own gets the helper's: this process's as it was when the helper started.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ExecOptions, ExecResult } from './exec-here';
import { bundleDir } from './project-root';
import type { HelperReply, HelperRequest } from './spawn-helper-protocol';

/** Exit code of a command whose helper exited (or could not be reached) before it answered. */
export const HELPER_LOST = 125;

/** The helper's node flags: a small heap (it holds only commands' outputs). */
export const SPAWN_HELPER_NODE_FLAGS = ['--max-old-space-size=64', '--max-semi-space-size=1'];

export function defaultSpawnHelperProgram(): string {
  return join(bundleDir(), 'spawn-helper.js');
}

/** One helper process and the requests it has not answered. */
interface Helper {
  child: ChildProcess;
  pending: Map<number, (result: ExecResult) => void>;
  exited: Promise<void>;
  /** Called once nothing is pending (a close waits for it). */
  drained?: () => void;
}

export class SpawnHelper {
  private helper: Helper | undefined;
  private nextId = 1;

  constructor(private readonly program: string = defaultSpawnHelperProgram()) {}

  /** The running helper's pid (none before the first command, or after it exited). */
  get pid(): number | undefined {
    return this.helper?.child.pid;
  }

  run(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    // A helper whose channel closed is on its way out (its exit fails what it had): a new one takes this command.
    const helper = this.helper?.child.connected ? this.helper : this.start();
    const id = this.nextId++;
    const { signal, ...rest } = options;
    return new Promise((resolve) => {
      const onAbort = () => this.send(helper, { kind: 'kill', id });
      helper.pending.set(id, (result) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      });
      // An unanswered request keeps this process alive; an idle helper does not.
      helper.child.channel?.ref();
      this.send(helper, { kind: 'run', id, argv: [...argv], options: rest });
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Lets the commands under way answer (each within its own deadline), then closes the channel; resolves once the
   * helper has exited. A command asked for meanwhile starts a new helper.
   */
  async close(): Promise<void> {
    const helper = this.helper;
    this.helper = undefined;
    if (!helper) return;
    // Waited for with the child referenced: an unreferenced one would let this process end before its exit is seen.
    helper.child.ref();
    if (helper.pending.size > 0) await new Promise<void>((resolve) => (helper.drained = resolve));
    if (helper.child.connected) helper.child.disconnect();
    await helper.exited;
  }

  private send(helper: Helper, request: HelperRequest): void {
    const fail = (why: string) => {
      if (request.kind === 'run') answer(helper, request.id, lost(why));
    };
    if (!helper.child.connected) fail('its channel is closed');
    else
      helper.child.send(request, (err) => {
        if (err) fail(err.message);
      });
  }

  private start(): Helper {
    const child = spawn(process.execPath, [...SPAWN_HELPER_NODE_FLAGS, this.program], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const helper: Helper = {
      child,
      pending: new Map(),
      exited: new Promise((resolve) => {
        const ended = (why: string) => {
          if (this.helper === helper) this.helper = undefined;
          for (const id of [...helper.pending.keys()]) answer(helper, id, lost(why));
          resolve();
        };
        child.once('exit', (code, signal) => ended(`it exited (${signal ?? `code ${code}`})`));
        child.once('error', (err) => ended(err.message));
      }),
    };
    child.on('message', (reply: HelperReply) => answer(helper, reply.id, reply.result));
    child.unref();
    child.channel?.unref();
    this.helper = helper;
    return helper;
  }
}

function answer(helper: Helper, id: number, result: ExecResult): void {
  const done = helper.pending.get(id);
  if (!done) return;
  helper.pending.delete(id);
  if (helper.pending.size === 0) {
    helper.child.channel?.unref();
    helper.drained?.();
  }
  done(result);
}

function lost(why: string): ExecResult {
  return { code: HELPER_LOST, stdout: '', stderr: `the spawn helper did not answer: ${why}\n` };
}
