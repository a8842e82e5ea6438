import type { CatalogEntry } from './entry';
import type { Catalog, ChangeListener } from './types';

interface Slot {
  lookup: Promise<CatalogEntry | undefined>;
  /** Set once the lookup succeeded, so later hits are answered without a promise. */
  settled: boolean;
  entry: CatalogEntry | undefined;
  expiresAt: number;
}

/**
 * Keeps lookups of a remote catalog for a short time, so the hot path does not wait on the network.
 * Change notifications drop the affected slot at once; the TTL only bounds staleness when a notification
 * is lost. Misses are cached too (an upsert notification clears them). A hit on a settled lookup is answered
 * synchronously (no promise, no microtask hop); only the first lookup of an ID waits on the source.
 */
export class CachedCatalog implements Catalog {
  private readonly slots = new Map<string, Slot>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: Catalog,
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {
    this.unsubscribe = source.onChange((id) => this.invalidate(id));
  }

  get(sandboxID: string): CatalogEntry | undefined | Promise<CatalogEntry | undefined> {
    const now = Date.now();
    const slot = this.slots.get(sandboxID);
    if (slot && slot.expiresAt > now) return slot.settled ? slot.entry : slot.lookup;
    if (this.slots.size >= this.maxEntries) this.slots.clear();
    const lookup = Promise.resolve(this.source.get(sandboxID));
    const fresh: Slot = { lookup, settled: false, entry: undefined, expiresAt: now + this.ttlMs };
    this.slots.set(sandboxID, fresh);
    lookup.then(
      (entry) => {
        fresh.entry = entry;
        fresh.settled = true;
      },
      // A failed lookup is not remembered: the next request asks the source again.
      () => {
        if (this.slots.get(sandboxID) === fresh) this.slots.delete(sandboxID);
      },
    );
    return lookup;
  }

  /** Drops one sandbox's slot, or every slot when sandboxID is undefined. */
  invalidate(sandboxID: string | undefined): void {
    if (sandboxID === undefined) this.slots.clear();
    else this.slots.delete(sandboxID);
  }

  onChange(listener: ChangeListener): () => void {
    return this.source.onChange(listener);
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.slots.clear();
    await this.source.close();
  }
}
