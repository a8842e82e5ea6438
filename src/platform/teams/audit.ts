/**
 * The audit trail: who (team, key ID) did what to which resource, when, from where, and how it was answered. A Redis
 * stream in the teams' Redis (the fleet's shared one in a fleet, so one query sees every host's entries), trimmed to
 * the newest AUDIT_RETENTION entries at every write: bounded, whatever the traffic.
 */
import type Redis from 'ioredis';
import type { AuditEntry } from '../http/audit-actions';
import { DEFAULT_TEAMS_PREFIX } from './store';

/** How many entries the trail keeps (the oldest go first; Redis trims in whole blocks, so a few more may stay). */
export const AUDIT_RETENTION = 100_000;

export type { AuditEntry };

export interface AuditQuery {
  teamID?: string;
  action?: string;
  /** Entries at or after this time (ms since the epoch). */
  sinceMs?: number;
  /** The newest this many (after filtering); default 100. */
  limit?: number;
}

const FIELDS = ['at', 'teamID', 'keyID', 'action', 'target', 'from', 'status'] as const;
/** Entries read per round trip while filtering. */
const SCAN_BATCH = 1000;

export class AuditLog {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix = DEFAULT_TEAMS_PREFIX,
    private readonly retention = AUDIT_RETENTION,
  ) {
    this.key = `${prefix}audit`;
  }

  async record(entry: AuditEntry): Promise<void> {
    const values = FIELDS.flatMap((f) => [f, String(entry[f])]);
    await this.redis.xadd(this.key, 'MAXLEN', '~', String(this.retention), '*', ...values);
  }

  /** Newest first. */
  async query(q: AuditQuery = {}): Promise<AuditEntry[]> {
    const limit = q.limit ?? 100;
    const out: AuditEntry[] = [];
    let end = '+';
    const start = q.sinceMs !== undefined ? String(q.sinceMs) : '-';
    while (out.length < limit) {
      const batch = await this.redis.xrevrange(this.key, end, start, 'COUNT', SCAN_BATCH);
      for (const [, values] of batch) {
        const entry = toEntry(values);
        if (q.teamID !== undefined && entry.teamID !== q.teamID) continue;
        if (q.action !== undefined && entry.action !== q.action) continue;
        out.push(entry);
        if (out.length === limit) break;
      }
      if (batch.length < SCAN_BATCH) break;
      end = `(${batch[batch.length - 1]![0]}`;
    }
    return out;
  }
}

function toEntry(values: string[]): AuditEntry {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < values.length; i += 2) m.set(values[i]!, values[i + 1]!);
  return {
    at: m.get('at') ?? '',
    teamID: m.get('teamID') ?? '',
    keyID: m.get('keyID') ?? '',
    action: m.get('action') ?? '',
    target: m.get('target') ?? '',
    from: m.get('from') ?? '',
    status: Number(m.get('status') ?? 0),
  };
}
