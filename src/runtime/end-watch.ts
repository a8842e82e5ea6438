/**
 * Sandboxes that end by themselves. Under runsc a sandbox's memory limit bounds gVisor's kernel (the Sentry) with
 * everything in it: the application's memory is the Sentry's own, so when a process inside passes the limit the
 * host's OOM killer can only end the Sentry, and the whole sandbox ends with it (gVisor has no OOM killer inside).
 * Its network stack goes with it: the address it had taken over from the host answers nothing, not even a reset, so
 * every connection to it (a command's output stream, the next call) would wait forever.
 *
 * This watch notices such an end (the container's first process is gone or a zombie; its start time tells a reused
 * PID apart) and tells the listener why: 'out of memory' when the sandbox's memory cgroup counted an OOM kill. The
 * host's TCP connections to the sandbox's address are reset (`ss -K`, sock_destroy: the callers see the connection
 * end at once) only after that, in this order:
 * 1. the listener (the platform) takes the sandbox out of the gateway's routing, so a caller whose stream the reset
 *    ends and who then asks the sandbox's `/health` gets the gateway's 502 at once, not a wait on the silent address
 *    (the SDK then says the sandbox was killed);
 * 2. the platform's kill resets the connections, as every kill does, before the network attachment (the address)
 *    is released, so the next sandbox given it meets none of them.
 * A listener that kills nothing (a pooled sandbox is left to the pool's check, a closing platform) gets the reset
 * once it returns. A check is one read of /proc per sandbox per interval; a kill, stop or pause to disk stops the
 * watch first, so only an end nobody asked for is reported. The watch lives in the platform's process: after a
 * restart the platform hands back each sandbox it keeps (OciSandboxRuntime.adopt), and its watch starts again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cgroupDirs } from './cgroups';
import { exec } from '../util/exec';
import { readProcessStart } from '../util/process-start';

export const END_WATCH_INTERVAL_MS = 1000;

export type EndReason = 'out of memory' | 'its processes ended';

/** Told of an end; what it returns is awaited before the watch resets connections nobody reset (see above). */
export type EndListener = (sandboxID: string, why: EndReason) => void | Promise<void>;

/** The start time of a process that is gone: no process has it. */
const GONE = '';

interface Watched {
  pid: number;
  startTime: string;
  address: string;
  cgroup: string;
  /** Its end was seen and is being reported: not checked again; its address stays for the kill's reset. */
  ended?: true;
}

/** OOM kills a memory cgroup counted: v1 memory.oom_control or v2 memory.events, `oom_kill N`. */
export function oomKillCount(text: string): number {
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
}

export function oomKillsOf(relativeCgroup: string): number {
  let n = 0;
  for (const dir of cgroupDirs(relativeCgroup))
    for (const file of ['memory.oom_control', 'memory.events']) {
      try {
        n = Math.max(n, oomKillCount(fs.readFileSync(path.join(dir, file), 'utf8')));
      } catch {
        // not this hierarchy
      }
    }
  return n;
}

/**
 * Resets the host's TCP connections to a gVisor sandbox's address (`ss -K`, sock_destroy). Needed whenever the
 * Sentry is gone, by itself or by a kill or stop: its network stack took no connection down with it, so a kept-alive
 * connection of the platform's or the gateway's pool would still look open, and once the address is given to the
 * next sandbox a request on it would meet that sandbox's reset instead of a new connection.
 */
export async function resetConnections(address: string): Promise<void> {
  await exec(['ss', '-K', '-t', 'dst', address], { timeoutMs: 10_000 }).catch(() => undefined);
}

export class EndWatch {
  private readonly watched = new Map<string, Watched>();
  private readonly listeners: EndListener[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = END_WATCH_INTERVAL_MS) {}

  onEnded(listener: EndListener): void {
    this.listeners.push(listener);
  }

  /**
   * Watches the sandbox whose first process is `pid` (just started, or found again after a platform restart). A
   * process already gone counts as an end: the next check reports it.
   */
  watch(sandboxID: string, pid: number, address: string, cgroup: string): void {
    const start = readProcessStart(pid);
    this.watched.set(sandboxID, { pid, startTime: start?.alive ? start.startTime : GONE, address, cgroup });
    this.timer ??= setInterval(() => this.check(), this.intervalMs).unref();
  }

  /**
   * Stops watching; the address it had, also after its end was reported (a kill or stop resets its connections once
   * the container is gone, before its address is released).
   */
  unwatch(sandboxID: string): string | undefined {
    const address = this.watched.get(sandboxID)?.address;
    this.watched.delete(sandboxID);
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    return address;
  }

  private check(): void {
    for (const [id, w] of this.watched) {
      if (w.ended) continue;
      const now = readProcessStart(w.pid);
      if (now?.alive && now.startTime === w.startTime) continue;
      w.ended = true;
      void this.report(id, w);
    }
  }

  /** Tells the listeners, then resets the connections if none of them killed the sandbox (which resets them). */
  private async report(id: string, w: Watched): Promise<void> {
    const why: EndReason = oomKillsOf(w.cgroup) > 0 ? 'out of memory' : 'its processes ended';
    await Promise.allSettled(this.listeners.map(async (l) => l(id, why)));
    if (this.watched.get(id) !== w) return;
    this.unwatch(id);
    await resetConnections(w.address);
  }
}
