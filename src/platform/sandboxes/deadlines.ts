import { MAX_TIMER_MS } from '../../contract/connect-timeout';

/**
 * One timer per sandbox that fires at its end time. Times beyond what a Node timer holds are reached in steps, and
 * a time already past fires at once (a platform restarted after a sandbox's end acts on it right away).
 */
export class Deadlines {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly fire: (sandboxID: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  arm(sandboxID: string, endAtMs: number): void {
    this.clear(sandboxID);
    const delay = Math.max(0, endAtMs - this.now());
    const timer = setTimeout(
      () => {
        this.timers.delete(sandboxID);
        if (delay > MAX_TIMER_MS) this.arm(sandboxID, endAtMs);
        else this.fire(sandboxID);
      },
      Math.min(delay, MAX_TIMER_MS),
    );
    timer.unref();
    this.timers.set(sandboxID, timer);
  }

  clear(sandboxID: string): void {
    const timer = this.timers.get(sandboxID);
    if (timer) clearTimeout(timer);
    this.timers.delete(sandboxID);
  }

  armed(sandboxID: string): boolean {
    return this.timers.has(sandboxID);
  }

  clearAll(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
