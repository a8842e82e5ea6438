/**
 * CreateWatcher / GetWatcherEvents / RemoveWatcher: watches kept by the agent between polls. Each keeps at most
 * MAX_PENDING events (older ones are dropped first) so a client that stops polling costs bounded memory, and at
 * most MAX_WATCHERS exist at once.
 */
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';
import { DirWatch, type WatchEvent } from './watch';
import { nodeCrypto } from '../../util/node-crypto';

const MAX_PENDING = 10_000;
const MAX_WATCHERS = 256;

interface Watcher {
  watch: DirWatch;
  events: WatchEvent[];
  includeEntry: boolean;
  error: Error | undefined;
}

export class WatcherRegistry {
  private readonly watchers = new Map<string, Watcher>();

  create(dir: string, recursive: boolean, includeEntry: boolean): string {
    if (this.watchers.size >= MAX_WATCHERS) {
      throw new AgentError(Code.ResourceExhausted, `the agent already keeps ${MAX_WATCHERS} watchers: remove one first (RemoveWatcher)`);
    }
    const id = nodeCrypto().randomUUID();
    const w: Watcher = { events: [], includeEntry, error: undefined, watch: undefined as unknown as DirWatch };
    w.watch = new DirWatch(
      dir,
      recursive,
      (e) => {
        if (w.events.length >= MAX_PENDING) w.events.shift();
        w.events.push(e);
      },
      (err) => {
        w.error = err;
      },
    );
    this.watchers.set(id, w);
    return id;
  }

  /** The events since the last call, and whether entries were asked for. */
  take(id: string): { events: WatchEvent[]; includeEntry: boolean } {
    const w = this.get(id);
    if (w.error) throw new AgentError(Code.Internal, `watcher ${id} failed: ${w.error.message}`);
    const events = w.events;
    w.events = [];
    return { events, includeEntry: w.includeEntry };
  }

  remove(id: string): void {
    this.get(id).watch.close();
    this.watchers.delete(id);
  }

  closeAll(): void {
    for (const w of this.watchers.values()) w.watch.close();
    this.watchers.clear();
  }

  private get(id: string): Watcher {
    const w = this.watchers.get(id);
    if (!w) throw new AgentError(Code.NotFound, `no watcher with id ${JSON.stringify(id)}`);
    return w;
  }
}
