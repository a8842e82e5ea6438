/**
 * At most `size` builds run at once on a platform host (builds.concurrent); the others wait in order of arrival,
 * each told its place in the queue as it changes. Closing refuses every waiting build.
 */
export class SlotsClosed extends Error {}

interface Waiter {
  start(): void;
  refuse(err: Error): void;
  moved(ahead: number): void;
}

export class BuildSlots {
  private busy = 0;
  private readonly queue: Waiter[] = [];
  private closed = false;

  constructor(readonly size: number) {}

  get running(): number {
    return this.busy;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves with a release function once a slot is free. `onQueued(ahead)` is told when the build has to wait (how
   * many wait before it) and again each time that number changes; never when a slot is free at once.
   */
  acquire(onQueued?: (ahead: number) => void): Promise<() => void> {
    if (this.closed) return Promise.reject(new SlotsClosed('the platform is stopping'));
    if (this.busy < this.size) {
      this.busy += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => resolve(this.releaser()),
        refuse: reject,
        moved: (ahead) => onQueued?.(ahead),
      };
      this.queue.push(waiter);
      waiter.moved(this.queue.length - 1);
    });
  }

  /** Refuses every waiting build; running ones keep their slots until they release them. */
  close(): void {
    this.closed = true;
    for (const w of this.queue.splice(0)) w.refuse(new SlotsClosed('the platform stopped before this build could start'));
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (!next) {
        this.busy -= 1;
        return;
      }
      next.start(); // the slot passes on: busy stays the same
      for (const [i, w] of this.queue.entries()) w.moved(i);
    };
  }
}
