/**
 * A process the agent started: its pipes (stdin a real pipe, stdin-pipe.ts), the streams reading it, its config for List, and the ways to talk to it
 * (input, signals, terminal size). It outlives the call that started it: a client that disconnects leaves it
 * running, and Connect attaches a new reader.
 *
 * Back-pressure: each reader has a bounded queue; when any reader's queue is full the process's stdout/stderr are
 * paused (the kernel pipe fills and the program blocks in write), and they resume once every reader has room.
 * With no reader attached, output is read and dropped, so a detached program never blocks on a full pipe.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { Socket } from 'node:net';
import type { LaunchPlan } from './launch';
import { openStdinPipe } from './stdin-pipe';
import { type ProcessOutput, Subscriber } from './subscriber';

const READER_HIGH_WATER = 1024 * 1024;

export interface ProcessConfigInfo {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd?: string;
}

export class ManagedProcess {
  readonly pid: number;
  private readonly subscribers = new Set<Subscriber>();
  private paused = false;
  private ended: Extract<ProcessOutput, { kind: 'end' }> | undefined;
  private killReason: string | undefined;
  readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly stdin: Socket | undefined,
    readonly config: ProcessConfigInfo,
    readonly tag: string | undefined,
    readonly pty: boolean,
  ) {
    this.pid = child.pid!;
    const outputs: Array<[NodeJS.ReadableStream | null, 'stdout' | 'stderr']> = [
      [child.stdout, pty ? 'stdout' : 'stdout'],
      [child.stderr, 'stderr'],
    ];
    for (const [stream, name] of outputs) {
      stream?.on('data', (bytes: Buffer) => this.emit({ kind: 'data', stream: pty ? 'pty' : name, bytes }));
    }
    // An input pipe whose reader exited gives EPIPE on the next write: not the agent's failure.
    stdin?.on('error', () => {});
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        stdin?.destroy();
        this.ended = endEvent(code, signal, this.killReason);
        this.emit(this.ended);
        resolve();
      });
    });
  }

  /** Spawns the plan; throws the spawn error (ENOENT, EACCES) synchronously-ish, before any event is sent. */
  static async start(
    plan: LaunchPlan,
    config: ProcessConfigInfo,
    tag: string | undefined,
    pty: boolean,
    keepStdin: boolean,
  ): Promise<ManagedProcess> {
    const input = keepStdin ? await openStdinPipe() : undefined;
    let child: ChildProcess;
    try {
      child = spawn(plan.file, plan.args, {
        cwd: plan.cwd,
        env: plan.env,
        stdio: [input?.childEnd ?? 'ignore', 'pipe', 'pipe'],
        detached: true, // its own process group: signals reach everything it started
      });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (err) {
      input?.writer.destroy();
      throw err;
    } finally {
      if (input) fs.closeSync(input.childEnd);
    }
    return new ManagedProcess(child, input?.writer, config, tag, pty);
  }

  get running(): boolean {
    return this.ended === undefined;
  }

  /** A new reader; it sees output from now on (and the end event, even if the process already ended). */
  subscribe(): Subscriber {
    const s = new Subscriber(READER_HIGH_WATER, () => this.updateFlow());
    if (this.ended) {
      s.push(this.ended);
      return s;
    }
    this.subscribers.add(s);
    return s;
  }

  unsubscribe(s: Subscriber): void {
    this.subscribers.delete(s);
    s.close();
    this.updateFlow();
  }

  private emit(item: ProcessOutput): void {
    for (const s of this.subscribers) s.push(item);
    if (item.kind === 'data') this.updateFlow();
  }

  private updateFlow(): void {
    let full = false;
    for (const s of this.subscribers) if (s.full) full = true;
    if (full === this.paused) return;
    this.paused = full;
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (full) stream?.pause();
      else stream?.resume();
    }
  }

  writeStdin(bytes: Buffer): Promise<void> {
    const stdin = this.stdin;
    if (!stdin || stdin.writableEnded || stdin.destroyed) return Promise.reject(new Error('stdin is closed'));
    return new Promise((resolve, reject) => {
      stdin.write(bytes, (err) => (err ? reject(err) : resolve()));
    });
  }

  closeStdin(): void {
    this.stdin?.end();
  }

  /** Signals the whole process group; falls back to the process alone if the group is gone. */
  signal(sig: NodeJS.Signals, reason?: string): void {
    if (!this.running) return;
    if (reason !== undefined && this.killReason === undefined) this.killReason = reason;
    try {
      process.kill(-this.pid, sig);
    } catch {
      try {
        process.kill(this.pid, sig);
      } catch {
        /* already gone */
      }
    }
  }

  /**
   * The terminal device of a pty process: `script` is this pid (the wrappers exec), and its child, the command,
   * has the terminal as its controlling tty. Found from /proc/<pid>/stat (parent pid, tty_nr), which anyone may
   * read; /proc/<pid>/fd of another user's process needs CAP_SYS_PTRACE, which a sandbox does not give the agent.
   */
  terminalPath(): string | undefined {
    let names: string[];
    try {
      names = fs.readdirSync('/proc');
    } catch {
      return undefined;
    }
    for (const name of names) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      } catch {
        continue;
      }
      const tty = ptsOfStat(stat, this.pid);
      if (tty) return tty;
    }
    return undefined;
  }
}

function endEvent(code: number | null, signal: NodeJS.Signals | null, reason: string | undefined): Extract<ProcessOutput, { kind: 'end' }> {
  if (code !== null) {
    return { kind: 'end', exitCode: code, exited: true, status: `exit status ${code}`, ...(reason ? { error: reason } : {}) };
  }
  const name = signal === 'SIGKILL' ? 'killed' : signal === 'SIGTERM' ? 'terminated' : (signal ?? 'unknown').toLowerCase();
  return { kind: 'end', exitCode: -1, exited: false, status: `signal: ${name}`, ...(reason ? { error: reason } : {}) };
}

/**
 * `/dev/pts/N` when a /proc/<pid>/stat line belongs to a child of `parent` whose controlling terminal is a pty.
 * Fields after the command name (which may hold spaces and parentheses): state ppid pgrp session tty_nr ...
 */
export function ptsOfStat(stat: string, parent: number): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (Number(fields[1]) !== parent) return undefined;
  const ttyNr = Number(fields[4]);
  const major = (ttyNr >> 8) & 0xfff;
  const minor = (ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00);
  // Unix98 pty slaves have majors 136..143, 256 minors each.
  if (major < 136 || major > 143) return undefined;
  return `/dev/pts/${(major - 136) * 256 + minor}`;
}
