/**
 * Paths in use by work under way (a build's layers and uploads, a create's template layers, a pull's store), held
 * against a collector that removes what nothing references. The collector moves one path at a time inside
 * `exclusive`, after checking `isHeld`; a holder that looked a path up takes its hold with `claim`, which runs under
 * the same mutex and checks that every path still exists. So either the collector moved the path first (the claim
 * answers undefined and the holder looks again, finding it gone from its index too), or the hold is there before the
 * collector looks at the path and it stays. A path made fresh (a new layer directory) is held with `hold` before it
 * is made: the collector cannot have seen it.
 */
import { existsSync } from 'node:fs';
import { resolve, sep } from 'node:path';

/** Releases a hold; calling it again does nothing. */
export type Release = () => void;

/** Every path held at any moment since it was made, until `stop`: what a collector's records may not show yet. */
export interface HoldTracker {
  /** Whether `path` was held (or under or above a held path) at any moment since the tracker was made. */
  seen(path: string): boolean;
  /** Whether `path` itself, or a directory above it, was held at any moment since the tracker was made. */
  covered(path: string): boolean;
  stop(): void;
}

function related(a: string, b: string): boolean {
  return a === b || a.startsWith(b + sep) || b.startsWith(a + sep);
}

export class PathHolds {
  private readonly counts = new Map<string, number>();
  private readonly trackers = new Set<Set<string>>();
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * Starts recording every path held now or later: a collector makes one before it reads what references what, so
   * a hold released after that read (a build whose record then names its layers) still counts.
   */
  track(): HoldTracker {
    const seen = new Set(this.counts.keys());
    this.trackers.add(seen);
    return {
      seen: (path) => {
        const p = resolve(path);
        for (const h of seen) if (related(h, p)) return true;
        return false;
      },
      covered: (path) => {
        const p = resolve(path);
        for (const h of seen) if (h === p || p.startsWith(h + sep)) return true;
        return false;
      },
      stop: () => void this.trackers.delete(seen),
    };
  }

  /** Runs `fn` with no claim and no other exclusive section in between. */
  exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Holds `paths` until the release is called (for paths made fresh, or already held by the caller). */
  hold(paths: readonly string[]): Release {
    const held = paths.map((p) => resolve(p));
    for (const p of held) {
      this.counts.set(p, (this.counts.get(p) ?? 0) + 1);
      for (const t of this.trackers) t.add(p);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const p of held) {
        const n = (this.counts.get(p) ?? 1) - 1;
        if (n <= 0) this.counts.delete(p);
        else this.counts.set(p, n);
      }
    };
  }

  /** Holds `paths` when every one of them still exists; undefined, holding nothing, when one is gone. */
  claim(paths: readonly string[]): Promise<Release | undefined> {
    return this.exclusive(() => (paths.every((p) => existsSync(p)) ? this.hold(paths) : undefined));
  }

  /** Whether `path` is held, lies under a held path, or holds one under it. */
  isHeld(path: string): boolean {
    const p = resolve(path);
    for (const h of this.counts.keys()) if (related(h, p)) return true;
    return false;
  }

  /** How many paths are held now. */
  get size(): number {
    return this.counts.size;
  }
}
