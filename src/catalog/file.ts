import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { CatalogEntry } from './entry';
import { ChangeListeners } from './change-listeners';
import { parseCatalogFile } from './file-format';
import type { Catalog, ChangeListener } from './types';

/**
 * A catalog read from a JSON file, for static setups. The file is re-read when it changes; the directory
 * is watched rather than the file, so editors and deploy tools that replace the file by renaming work.
 * A change that does not parse keeps the last good catalog and is reported through onError.
 */
export class FileCatalog implements Catalog {
  private entries = new Map<string, CatalogEntry>();
  private readonly listeners = new ChangeListeners();
  private watcher: FSWatcher | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> = Promise.resolve();
  readonly path: string;

  private constructor(
    path: string,
    private readonly onError: (message: string) => void,
  ) {
    this.path = resolve(path);
  }

  /** Reads the file once (a bad file is an error here, naming the problem) and starts watching it. */
  static async open(path: string, onError: (message: string) => void = () => {}): Promise<FileCatalog> {
    const catalog = new FileCatalog(path, onError);
    catalog.entries = await catalog.read();
    catalog.startWatching();
    return catalog;
  }

  get(sandboxID: string): CatalogEntry | undefined {
    return this.entries.get(sandboxID);
  }

  onChange(listener: ChangeListener): () => void {
    return this.listeners.add(listener);
  }

  /** Re-reads the file now; resolves once the new content (or the error) has been taken in. */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(async () => {
      try {
        this.entries = await this.read();
        this.listeners.emit(undefined);
      } catch (err) {
        this.onError(`${(err as Error).message}; keeping the previous catalog`);
      }
    });
    return this.reloading;
  }

  async close(): Promise<void> {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    this.listeners.clear();
    await this.reloading;
  }

  private async read(): Promise<Map<string, CatalogEntry>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      throw new Error(`catalog file ${this.path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    return parseCatalogFile(text, `catalog file ${this.path}`);
  }

  private startWatching(): void {
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed.toString() !== name) return;
      // Writers emit several events per save; one re-read after they settle is enough.
      if (this.reloadTimer) clearTimeout(this.reloadTimer);
      this.reloadTimer = setTimeout(() => void this.reload(), 50);
    });
    this.watcher.on('error', (err) => this.onError(`catalog file ${this.path}: watching stopped (${err.message})`));
  }
}
