/**
 * The warm pool (docs/platform.md#warm-pool): per template, N sandboxes started, networked and waiting for their
 * `/init`, so a create takes one instead of starting a container. A pooled sandbox belongs to nobody: no record,
 * no catalog entry, no team quota; its agent holds a token only the platform knows, so nothing else can call it.
 * The pool is filled in the background, one sandbox at a time; a fill the host's admission refuses waits for the
 * next check. Every check re-resolves each template: a sandbox of a build that is no longer the template's current
 * one (rebuilt, deleted) and one whose agent stopped answering are discarded, never handed out.
 */
import type { TemplateForSandbox } from './template-resolver';

/** One started sandbox waiting in the pool. */
export interface PooledSandbox {
  sandboxID: string;
  /** Its address on the sandbox network. */
  address: string;
  /** What its agent requires until the take's /init replaces it; only the platform has it. */
  token: string;
  /** The template build it was started from. */
  template: TemplateForSandbox;
  /** When it was ready (ms since the epoch). */
  readyAt: number;
}

export interface WarmPoolOptions {
  /** How many to keep ready, per template ID or alias. */
  sizes: ReadonlyMap<string, number>;
  /** The template's current build, or undefined when it has none (deleted, never built). */
  resolve(name: string): Promise<TemplateForSandbox | undefined>;
  /** Starts one sandbox of the template up to its agent answering; on failure nothing of it is left. */
  start(template: TemplateForSandbox): Promise<PooledSandbox>;
  /** Whether its agent still answers. */
  alive(sandbox: PooledSandbox): Promise<boolean>;
  /** Removes everything of it. */
  discard(sandbox: PooledSandbox): Promise<void>;
  log(line: string): void;
  /** How often each template is re-resolved, its sandboxes checked and its pool refilled (default 2 s). */
  checkEveryMs?: number;
}

export const DEFAULT_POOL_CHECK_MS = 2000;

/** The same build of the same template: the only sandboxes a create of that template may take. */
export function sameBuild(a: TemplateForSandbox, b: TemplateForSandbox): boolean {
  return (
    a.templateID === b.templateID &&
    a.buildID === b.buildID &&
    a.memoryMB === b.memoryMB &&
    a.cpuCount === b.cpuCount &&
    a.diskSizeMB === b.diskSizeMB &&
    a.layers.length === b.layers.length &&
    a.layers.every((layer, i) => layer === b.layers[i])
  );
}

export class WarmPool {
  private readonly ready = new Map<string, PooledSandbox[]>();
  private readonly checkEveryMs: number;
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly o: WarmPoolOptions) {
    this.checkEveryMs = o.checkEveryMs ?? DEFAULT_POOL_CHECK_MS;
    for (const name of o.sizes.keys()) this.ready.set(name, []);
  }

  /** Begins filling, and checks every checkEveryMs. */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => this.kick(), this.checkEveryMs);
    this.timer.unref();
    this.kick();
  }

  /** Ready sandboxes per template name. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.ready].map(([name, list]) => [name, list.length]));
  }

  /** The ready sandboxes (IDs and addresses, never their tokens), per template name. */
  members(): Record<string, Array<{ sandboxID: string; address: string }>> {
    return Object.fromEntries(
      [...this.ready].map(([name, list]) => [name, list.map(({ sandboxID, address }) => ({ sandboxID, address }))]),
    );
  }

  /**
   * Removes and returns a ready sandbox of exactly this build (the longest ready first), or undefined; a refill
   * begins. Synchronous, so two creates never take the same one.
   */
  take(template: TemplateForSandbox): PooledSandbox | undefined {
    for (const list of this.ready.values()) {
      const i = list.findIndex((s) => sameBuild(s.template, template));
      if (i === -1) continue;
      const [taken] = list.splice(i, 1);
      this.kick();
      return taken;
    }
    return undefined;
  }

  /** Puts back a sandbox `take` gave that was not touched (its create was refused before anything reached it). */
  giveBack(sandbox: PooledSandbox): void {
    const list = [...this.ready.values()].find((l) => l.length === 0 || sameBuild(l[0]!.template, sandbox.template));
    if (!list || this.closed) void this.discard(sandbox, 'the pool no longer takes it');
    else list.unshift(sandbox);
  }

  /** Removes it (a taken one whose agent did not take its /init); failures are logged. */
  async discard(sandbox: PooledSandbox, why: string): Promise<void> {
    this.o.log(`warm pool: sandbox ${sandbox.sandboxID} removed (${why})`);
    await this.o.discard(sandbox).catch((err: Error) => this.o.log(`warm pool: removing ${sandbox.sandboxID} failed: ${err.message}`));
  }

  /** Stops filling and removes every ready sandbox. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.cycle;
    const all = [...this.ready.values()].flatMap((list) => list.splice(0));
    await Promise.all(all.map((s) => this.discard(s, 'the platform stopped')));
  }

  /** Runs a check-and-fill cycle now, or once more after the running one. */
  private kick(): void {
    if (this.closed) return;
    if (this.cycle) {
      this.again = true;
      return;
    }
    this.cycle = this.runCycles().finally(() => {
      this.cycle = undefined;
    });
  }

  private async runCycles(): Promise<void> {
    do {
      this.again = false;
      for (const [name, size] of this.o.sizes) {
        if (this.closed) return;
        await this.check(name, size).catch((err: Error) => this.o.log(`warm pool ${name}: ${err.message}`));
      }
    } while (this.again && !this.closed);
  }

  /** One template: drop what is stale or dead, then start sandboxes up to its size. */
  private async check(name: string, size: number): Promise<void> {
    const list = this.ready.get(name) as PooledSandbox[];
    const current = await this.o.resolve(name).catch((err: Error) => {
      this.o.log(`warm pool ${name}: the template did not resolve: ${err.message}`);
      return undefined;
    });
    for (const s of [...list]) {
      const why = !current
        ? 'its template is gone'
        : !sameBuild(s.template, current)
          ? 'its template was rebuilt'
          : (await this.o.alive(s))
            ? undefined
            : 'its agent stopped answering';
      if (why === undefined) continue;
      // A create may have taken it meanwhile.
      const i = list.indexOf(s);
      if (i === -1) continue;
      list.splice(i, 1);
      await this.discard(s, why);
    }
    while (current && list.length < size && !this.closed) {
      let started: PooledSandbox;
      try {
        started = await this.o.start(current);
      } catch (err) {
        // The host's admission, or a failing template: tried again at the next check.
        this.o.log(`warm pool ${name}: could not start a sandbox: ${(err as Error).message}`);
        return;
      }
      if (this.closed) {
        await this.discard(started, 'the platform stopped');
        return;
      }
      list.push(started);
      this.o.log(`warm pool ${name}: sandbox ${started.sandboxID} ready (${list.length} of ${size})`);
    }
  }
}
