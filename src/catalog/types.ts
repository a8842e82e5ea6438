import type { CatalogEntry, CatalogEntryInput, SandboxState } from './entry';

/**
 * Called when an entry may have changed: with its sandboxID, or with undefined when anything may have
 * changed (a file re-read, a lost Redis subscription).
 */
export type ChangeListener = (sandboxID: string | undefined) => void;

/** Where the gateway looks sandboxes up. Lookups may be synchronous (in-process) or not (Redis). */
export interface Catalog {
  get(sandboxID: string): CatalogEntry | undefined | Promise<CatalogEntry | undefined>;
  /** Subscribes to changes; returns the unsubscribe function. */
  onChange(listener: ChangeListener): () => void;
  close(): Promise<void>;
}

/** A catalog the platform (or a test) fills: the embedded one and the Redis one. */
export interface WritableCatalog extends Catalog {
  upsert(entry: CatalogEntryInput): Promise<CatalogEntry>;
  /** Resolves to false when there was no such sandbox. */
  remove(sandboxID: string): Promise<boolean>;
  /** Resolves to false when there was no such sandbox (a state is never set on a missing entry). */
  setState(sandboxID: string, state: SandboxState): Promise<boolean>;
}
