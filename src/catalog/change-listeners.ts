import type { ChangeListener } from './types';

/** The listener list every catalog keeps; a throwing listener cannot stop the others. */
export class ChangeListeners {
  private readonly listeners = new Set<ChangeListener>();

  add(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(sandboxID: string | undefined): void {
    for (const listener of this.listeners) {
      try {
        listener(sandboxID);
      } catch {
        // A listener's bug must not break the catalog's other consumers.
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
