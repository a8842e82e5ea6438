/**
 * The contexts of one server: each a language, a working directory and its kernel, which keeps the state between
 * runs. Runs in a context are queued, one at a time. A kernel that died is replaced at once (its state is lost);
 * a restart replaces it on request.
 */
import { randomUUID } from 'node:crypto';
import type { KernelProcess, Outcome } from './kernel';
import type { KernelEvent, Language } from './wire';

/** How to start a kernel for a language in a directory (main.ts knows where the bridge and node are). */
export type KernelStarter = (language: Language, cwd: string) => KernelProcess;

export interface Context {
  id: string;
  language: Language;
  cwd: string;
}

interface Entry extends Context {
  kernel: KernelProcess;
  queue: Promise<unknown>;
}

export class Contexts {
  private readonly entries = new Map<string, Entry>();
  /** The context a run without context_id uses, per language. */
  private readonly defaults = new Map<Language, Promise<Entry>>();

  constructor(
    private readonly start: KernelStarter,
    private readonly defaultCwd: string,
  ) {}

  /** Starts a context's kernel and resolves once it answers. */
  async create(language: Language, cwd = this.defaultCwd): Promise<Context> {
    return view(await this.createEntry(language, cwd));
  }

  private async createEntry(language: Language, cwd: string): Promise<Entry> {
    const kernel = this.start(language, cwd);
    try {
      await kernel.ready;
    } catch (err) {
      await kernel.close();
      throw err;
    }
    const entry: Entry = { id: randomUUID(), language, cwd, kernel, queue: Promise.resolve() };
    this.entries.set(entry.id, entry);
    return entry;
  }

  /** The default context of a language, started on first use (python's is started with the server). */
  defaultContext(language: Language): Promise<Context> {
    return this.defaultEntry(language).then(view);
  }

  private defaultEntry(language: Language): Promise<Entry> {
    let entry = this.defaults.get(language);
    if (entry === undefined) {
      entry = this.createEntry(language, this.defaultCwd);
      // A failed start is not kept: the next run tries again.
      entry.catch(() => this.defaults.delete(language));
      this.defaults.set(language, entry);
    }
    return entry;
  }

  get(id: string): Context | undefined {
    const entry = this.entries.get(id);
    return entry && view(entry);
  }

  list(): Context[] {
    return [...this.entries.values()].map(view);
  }

  /**
   * Runs code in a context, after the runs queued before it. `cancelled` is checked before it starts and while it
   * runs: once it says so, the kernel is interrupted (the client went away: `timeoutMs` ran out).
   */
  run(
    id: string,
    code: string,
    envs: Record<string, string>,
    onEvent: (event: KernelEvent) => void,
    cancelled: AbortSignal,
  ): Promise<Outcome | 'cancelled'> {
    const entry = this.entries.get(id);
    if (entry === undefined) return Promise.reject(new Error(`context ${id} not found`));
    const result = entry.queue.then(async () => {
      if (cancelled.aborted) return 'cancelled' as const;
      await entry.kernel.ready.catch(() => undefined);
      const interrupt = () => entry.kernel.interrupt();
      cancelled.addEventListener('abort', interrupt);
      try {
        const outcome = await entry.kernel.run(code, envs, onEvent);
        if (outcome === 'dead') this.replaceKernel(entry);
        return outcome;
      } finally {
        cancelled.removeEventListener('abort', interrupt);
      }
    });
    entry.queue = result.catch(() => undefined);
    return result;
  }

  /** Starts a new kernel for the context (its state is gone) and waits until it answers. */
  async restart(id: string): Promise<boolean> {
    const entry = this.entries.get(id);
    if (entry === undefined) return false;
    const done = entry.queue.then(async () => {
      await entry.kernel.close();
      this.replaceKernel(entry);
      await entry.kernel.ready;
    });
    entry.queue = done.catch(() => undefined);
    await done;
    return true;
  }

  async remove(id: string): Promise<boolean> {
    const entry = this.entries.get(id);
    if (entry === undefined) return false;
    this.entries.delete(id);
    for (const [language, def] of this.defaults) if ((await def.catch(() => undefined)) === entry) this.defaults.delete(language);
    entry.kernel.interrupt();
    await entry.queue;
    await entry.kernel.close();
    return true;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.kernel.close()));
    this.entries.clear();
    this.defaults.clear();
  }

  private replaceKernel(entry: Entry): void {
    entry.kernel = this.start(entry.language, entry.cwd);
    entry.kernel.ready.catch((err: Error) => process.stderr.write(`code-interpreter: context ${entry.id}: ${err.message}\n`));
  }
}

function view(entry: Entry): Context {
  return { id: entry.id, language: entry.language, cwd: entry.cwd };
}
