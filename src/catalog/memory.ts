import { toCatalogEntry, type CatalogEntry, type CatalogEntryInput, type SandboxState } from './entry';
import { ChangeListeners } from './change-listeners';
import type { ChangeListener, WritableCatalog } from './types';

/** The embedded catalog: a map in this process, filled by the local platform or by tests. */
export class MemoryCatalog implements WritableCatalog {
  private readonly entries = new Map<string, CatalogEntry>();
  private readonly listeners = new ChangeListeners();

  constructor(initial: CatalogEntryInput[] = []) {
    for (const input of initial) {
      const entry = toCatalogEntry(input);
      this.entries.set(entry.sandboxID, entry);
    }
  }

  get(sandboxID: string): CatalogEntry | undefined {
    return this.entries.get(sandboxID);
  }

  list(): CatalogEntry[] {
    return [...this.entries.values()];
  }

  async upsert(input: CatalogEntryInput): Promise<CatalogEntry> {
    const entry = toCatalogEntry(input);
    this.entries.set(entry.sandboxID, entry);
    this.listeners.emit(entry.sandboxID);
    return entry;
  }

  async remove(sandboxID: string): Promise<boolean> {
    const existed = this.entries.delete(sandboxID);
    if (existed) this.listeners.emit(sandboxID);
    return existed;
  }

  async setState(sandboxID: string, state: SandboxState): Promise<boolean> {
    const entry = this.entries.get(sandboxID);
    if (!entry) return false;
    this.entries.set(sandboxID, { ...entry, state });
    this.listeners.emit(sandboxID);
    return true;
  }

  onChange(listener: ChangeListener): () => void {
    return this.listeners.add(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
