/**
 * The fleet's host registry, in the shared catalog Redis: every sandbox host's platform writes one record (where its
 * API answers, its capacity, how many sandboxes it holds, the templates it can start) every few seconds, and reads
 * the others' to place a new sandbox or to pass a call on to the host that holds a sandbox. A record not refreshed
 * within HOST_TTL_MS is a host that is gone. Parsing and liveness are pure; the Redis calls are here too, nothing else.
 */
import type Redis from 'ioredis';
import type { PlacementHost } from './placement';

export const HOSTS_KEY = 'sandbox-kit:fleet:hosts';
export const HEARTBEAT_MS = 5_000;
export const HOST_TTL_MS = 20_000;

export interface FleetHost extends PlacementHost {
  /** Where this host's platform API answers the other hosts, e.g. http://10.0.1.23:3001. */
  apiUrl: string;
  /** Sandboxes it holds (running and paused). */
  sandboxes: number;
  /** IDs and aliases of its ready templates. */
  templates: string[];
  /** When the record was written (ms since the epoch). */
  seenAt: number;
}

/** What a host says about itself at each heartbeat. */
export type HostSnapshot = Pick<FleetHost, 'sandboxes' | 'templates' | 'accepting'>;

/** One record as stored; undefined for a record that is not one (another version's, or damaged). */
export function parseHostRecord(hostID: string, text: string): FleetHost | undefined {
  try {
    const r = JSON.parse(text) as Partial<FleetHost>;
    if (typeof r.apiUrl !== 'string' || typeof r.capacity !== 'number' || typeof r.sandboxes !== 'number') return undefined;
    if (typeof r.seenAt !== 'number' || typeof r.accepting !== 'boolean' || !Array.isArray(r.templates)) return undefined;
    return {
      hostID,
      apiUrl: r.apiUrl,
      capacity: r.capacity,
      accepting: r.accepting,
      sandboxes: r.sandboxes,
      templates: r.templates.filter((t): t is string => typeof t === 'string'),
      seenAt: r.seenAt,
    };
  } catch {
    return undefined;
  }
}

/** The hosts whose record is fresh, by host ID. */
export function liveHosts(records: Record<string, string>, now: number, ttlMs = HOST_TTL_MS): FleetHost[] {
  return Object.entries(records)
    .map(([id, text]) => parseHostRecord(id, text))
    .filter((h): h is FleetHost => h !== undefined && now - h.seenAt <= ttlMs)
    .sort((a, b) => (a.hostID < b.hostID ? -1 : 1));
}

export interface SelfHost {
  hostID: string;
  apiUrl: string;
  capacity: number;
}

export class HostRegistry {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    readonly self: SelfHost,
    private readonly snapshot: () => Promise<HostSnapshot>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes the record now and then every HEARTBEAT_MS. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Writes the record now (after a create or a removal, so placements elsewhere see the new count at once). */
  refresh(): Promise<void> {
    const next = this.writing.then(async () => {
      const record = { apiUrl: this.self.apiUrl, capacity: this.self.capacity, ...(await this.snapshot()), seenAt: this.now() };
      await this.redis.hset(HOSTS_KEY, this.self.hostID, JSON.stringify(record));
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  async hosts(): Promise<FleetHost[]> {
    return liveHosts(await this.redis.hgetall(HOSTS_KEY), this.now());
  }

  /** Stops the heartbeat and takes the record out: the host gets no more sandboxes or calls. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.writing;
    await this.redis.hdel(HOSTS_KEY, this.self.hostID).catch(() => undefined);
  }
}
