/**
 * The warm pool (docs/platform.md#warm-pool): per template, N sandboxes started, networked and waiting for their
 * `/init`, so a create takes one instead of starting a container. A pooled sandbox belongs to nobody: no record,
 * no catalog entry, no team quota; its agent holds a token only the platform knows, so nothing else can call it.
 * The pool is filled in the background, one sandbox at a time; a fill the host's admission refuses waits for the
 * next check. Every check re-resolves each template: a sandbox of a build that is no longer the template's current
 * one (rebuilt, deleted) and one whose agent stopped answering are discarded, never handed out. A create the host's
 * admission refuses evicts pooled sandboxes (`evict`) and holds the fills (`holdFills`) until it is admitted, waiting
 * for a fill under way to end when nothing is left to evict (`fillSettled`): the pool only ever fills what real creates
 * leave, and a create never fails for a pooled sandbox's room.
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
  /** How long after a take no sandbox is started for the pools (default DEFAULT_REFILL_AFTER_TAKE_MS). */
  refillAfterTakeMs?: number;
}

export const DEFAULT_POOL_CHECK_MS = 2000;
/**
 * A take's replacement starts this long after it (the first take of a burst counts): the create's answer and the
 * caller's first calls do not share the host's CPUs with a sandbox's start (its runtime, network and agent start).
 */
export const DEFAULT_REFILL_AFTER_TAKE_MS = 250;

/**
 * A pool's name: `TEMPLATE` (an alias or ID, resolved as the default team resolves it: its own and public templates)
 * or `TEAM/TEMPLATE` (TEAM a team's name or ID: resolved as that team does, so its private templates can be pooled).
 */
export function poolTemplateRef(name: string): { team?: string; ref: string } {
  const slash = name.indexOf('/');
  return slash === -1 ? { ref: name } : { team: name.slice(0, slash), ref: name.slice(slash + 1) };
}

/** One template's pool now, and what creates did with it since the start (the platform's metrics). */
export interface PoolStats {
  ready: number;
  /** Sandboxes being started for it (0 or 1: a pool fills one at a time). */
  starting: number;
  /** Creates served from it. */
  takes: number;
  /** Creates of its template that found it empty and started cold. */
  misses: number;
  /** Its sandboxes removed to make room for a create the host's admission refused. */
  evictions: number;
}

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
  /** Each pool's template as its last check resolved it (what a miss is counted against). */
  private readonly current = new Map<string, TemplateForSandbox>();
  private readonly stats = new Map<string, PoolStats>();
  /** Creates waiting for room the pool gave up: while any waits, nothing is started. */
  private fillHolds = 0;
  /** The sandbox being started for the pool (one at a time), until it is ready or failed. */
  private filling: Promise<void> | undefined;
  /** Pools whose last fill failed: the next failures are not logged again until one starts. */
  private readonly failing = new Set<string>();
  private readonly checkEveryMs: number;
  private readonly refillAfterTakeMs: number;
  /** No fill starts before this (performance.now()): a take's head start. */
  private fillsFrom = 0;
  /** The check due when a take's head start is over. */
  private deferred: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly o: WarmPoolOptions) {
    this.checkEveryMs = o.checkEveryMs ?? DEFAULT_POOL_CHECK_MS;
    this.refillAfterTakeMs = o.refillAfterTakeMs ?? DEFAULT_REFILL_AFTER_TAKE_MS;
    for (const name of o.sizes.keys()) {
      this.ready.set(name, []);
      this.stats.set(name, { ready: 0, starting: 0, takes: 0, misses: 0, evictions: 0 });
    }
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

  /** Each pool's sandboxes now and its takes, misses and evictions since the start, per template name. */
  statistics(): Record<string, PoolStats> {
    return Object.fromEntries(
      [...this.stats].map(([name, s]) => [name, { ...s, ready: (this.ready.get(name) as PooledSandbox[]).length }]),
    );
  }

  /** The ready sandboxes (IDs and addresses, never their tokens), per template name. */
  members(): Record<string, Array<{ sandboxID: string; address: string }>> {
    return Object.fromEntries(
      [...this.ready].map(([name, list]) => [name, list.map(({ sandboxID, address }) => ({ sandboxID, address }))]),
    );
  }

  /**
   * Removes and returns a ready sandbox of exactly this build (the longest ready first), or undefined; a refill
   * begins refillAfterTakeMs later. Synchronous, so two creates never take the same one.
   */
  take(template: TemplateForSandbox): PooledSandbox | undefined {
    for (const [name, list] of this.ready) {
      const i = list.findIndex((s) => sameBuild(s.template, template));
      if (i === -1) continue;
      const [taken] = list.splice(i, 1);
      this.stat(name).takes += 1;
      const now = performance.now();
      if (this.fillsFrom <= now) this.fillsFrom = now + this.refillAfterTakeMs;
      this.kick();
      return taken;
    }
    for (const [name, t] of this.current) if (sameBuild(t, template)) this.stat(name).misses += 1;
    return undefined;
  }

  /**
   * Removes and returns a ready sandbox to make room for a create of `template` the host's admission refused, or
   * undefined when none is left: one of another template first (the longest ready), then one of the same. The
   * caller discards it.
   */
  evict(template: TemplateForSandbox): PooledSandbox | undefined {
    const lists = [...this.ready];
    const others = lists.filter(([, list]) => list.length > 0 && !sameBuild(list[0]!.template, template));
    const same = lists.filter(([, list]) => list.length > 0 && sameBuild(list[0]!.template, template));
    for (const [name, list] of [...others, ...same]) {
      const oldest = list.reduce((a, b) => (b.readyAt < a.readyAt ? b : a));
      list.splice(list.indexOf(oldest), 1);
      this.stat(name).evictions += 1;
      return oldest;
    }
    return undefined;
  }

  /** Whether `evict` or a fill's end can give room now: a ready sandbox in any pool, or one being started. */
  canMakeRoom(): boolean {
    return this.filling !== undefined || [...this.ready.values()].some((list) => list.length > 0);
  }

  /**
   * Stops the pool starting sandboxes until the returned release is called (a create waiting for the room evicted
   * for it); then a check refills what the host's admission leaves.
   */
  holdFills(): () => void {
    this.fillHolds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.fillHolds -= 1;
      if (this.fillHolds === 0) this.kick();
    };
  }

  /**
   * Waits for the sandbox being started for the pool, if any, to be ready (then `evict` can give its room) or to
   * fail (its room is free); false when none was being started. A create refused while a fill holds the room waits
   * here instead of failing: with its fills held, no other starts after it.
   */
  async fillSettled(): Promise<boolean> {
    const filling = this.filling;
    if (!filling) return false;
    await filling;
    return true;
  }

  private stat(name: string): PoolStats {
    return this.stats.get(name) as PoolStats;
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
    if (this.deferred) clearTimeout(this.deferred);
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
    if (current) this.current.set(name, current);
    else this.current.delete(name);
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
    const wait = this.fillsFrom - performance.now();
    if (current && list.length < size && wait > 0) {
      // A take's head start: checked again once it is over.
      this.deferred ??= setTimeout(() => {
        this.deferred = undefined;
        this.kick();
      }, Math.ceil(wait) + 1);
      this.deferred.unref();
      return;
    }
    while (current && list.length < size && !this.closed && this.fillHolds === 0) {
      // Settled once the sandbox is in the list (or failed, or discarded): what fillSettled waits for.
      let settle = () => {};
      this.filling = new Promise<void>((resolve) => (settle = resolve));
      try {
        if (!(await this.fillOne(name, size, current, list))) return;
      } finally {
        this.filling = undefined;
        settle();
      }
    }
  }

  /** Starts one sandbox into `list`; false when it could not (tried again at the next check) or the pool closed. */
  private async fillOne(name: string, size: number, current: TemplateForSandbox, list: PooledSandbox[]): Promise<boolean> {
    let started: PooledSandbox;
    this.stat(name).starting = 1;
    try {
      started = await this.o.start(current);
    } catch (err) {
      // The host's admission, or a failing template: tried again at the next check, logged once.
      if (!this.failing.has(name))
        this.o.log(`warm pool ${name}: could not start a sandbox (tried again at every check): ${(err as Error).message}`);
      this.failing.add(name);
      return false;
    } finally {
      this.stat(name).starting = 0;
    }
    if (this.closed) {
      await this.discard(started, 'the platform stopped');
      return false;
    }
    this.failing.delete(name);
    list.push(started);
    this.o.log(`warm pool ${name}: sandbox ${started.sandboxID} ready (${list.length} of ${size})`);
    return true;
  }
}
