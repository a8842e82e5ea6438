/**
 * Each sandbox's log: what its start command printed and what the platform did to it (created, ready, paused,
 * resumed, killed), one Redis list per sandbox, trimmed to the newest MAX_LOG_ENTRIES, removed with the sandbox.
 * The reading side is pure: both of E2B's log shapes (v1, which `e2b sandbox logs` reads, and v2) come from here.
 */
import type Redis from 'ioredis';

export const MAX_LOG_ENTRIES = 2_000;
/** Longest line kept; a start command printing megabytes on one line is cut, not stored whole. */
export const MAX_LINE_CHARS = 4_096;

export type SandboxLogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly SandboxLogLevel[] = ['debug', 'info', 'warn', 'error'];

/** One entry as stored and as v2 sends it (E2B's SandboxLogEntry). */
export interface SandboxLogEntry {
  timestamp: string;
  level: SandboxLogLevel;
  message: string;
  /** `logger`: `start-cmd` (its stdout/stderr, `stream` says which) or `platform` (lifecycle). */
  fields: Record<string, string>;
}

export function logEntry(level: SandboxLogLevel, logger: string, message: string, extra: Record<string, string> = {}): SandboxLogEntry {
  return {
    timestamp: new Date().toISOString(),
    level,
    message: message.length > MAX_LINE_CHARS ? `${message.slice(0, MAX_LINE_CHARS)}…` : message,
    fields: { logger, ...extra },
  };
}

/** v1's `{timestamp, line}`: the line is a JSON object (level, logger, message), which the E2B CLI parses and prints. */
export function v1Line(e: SandboxLogEntry): { timestamp: string; line: string } {
  return { timestamp: e.timestamp, line: JSON.stringify({ level: e.level, ...e.fields, message: e.message }) };
}

export interface LogQuery {
  /** Only entries at or after this time (ms since the epoch); v2's cursor. */
  fromMs?: number;
  direction: 'forward' | 'backward';
  limit: number;
  minLevel?: SandboxLogLevel;
  search?: string;
}

/** Entries oldest first in, the page out: filtered, then the first `limit` in the asked direction. */
export function selectLogs(entries: readonly SandboxLogEntry[], q: LogQuery): SandboxLogEntry[] {
  const floor = q.minLevel ? LOG_LEVELS.indexOf(q.minLevel) : 0;
  const kept = entries.filter((e) => {
    const at = Date.parse(e.timestamp);
    if (q.fromMs !== undefined && (q.direction === 'forward' ? at < q.fromMs : at > q.fromMs)) return false;
    if (LOG_LEVELS.indexOf(e.level) < floor) return false;
    return q.search === undefined || e.message.includes(q.search);
  });
  return q.direction === 'forward' ? kept.slice(0, q.limit) : kept.reverse().slice(0, q.limit);
}

export class SandboxLogs {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(sandboxID: string): string {
    return `${this.prefix}logs:${sandboxID}`;
  }

  async append(sandboxID: string, entries: readonly SandboxLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const key = this.key(sandboxID);
    await this.redis
      .multi()
      .rpush(key, ...entries.map((e) => JSON.stringify(e)))
      .ltrim(key, -MAX_LOG_ENTRIES, -1)
      .exec();
  }

  async all(sandboxID: string): Promise<SandboxLogEntry[]> {
    return (await this.redis.lrange(this.key(sandboxID), 0, -1)).map((text) => JSON.parse(text) as SandboxLogEntry);
  }

  async remove(sandboxID: string): Promise<void> {
    await this.redis.del(this.key(sandboxID));
  }
}

/** Turns a process's output chunks into lines, each appended as one entry; a partial line waits for its end. */
export class LineSplitter {
  private partial = '';

  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: string): void {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MAX_LINE_CHARS) {
      lines.push(this.partial);
      this.partial = '';
    }
    for (const line of lines) this.emit(line.replace(/\r$/, ''));
  }

  flush(): void {
    if (this.partial !== '') this.emit(this.partial);
    this.partial = '';
  }
}

/**
 * Appends entries in the order they come, without making the caller wait: what arrives while a write is under way
 * goes out in the next one. Failures are reported, never thrown at the sandbox's lifecycle.
 */
export class LogWriter {
  private readonly pending = new Map<string, SandboxLogEntry[]>();
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly logs: SandboxLogs,
    private readonly onError: (err: Error) => void,
  ) {}

  write(sandboxID: string, entry: SandboxLogEntry): void {
    const queue = this.pending.get(sandboxID) ?? [];
    queue.push(entry);
    this.pending.set(sandboxID, queue);
    this.flushing ??= this.drain();
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending];
      this.pending.clear();
      for (const [id, entries] of batch) await this.logs.append(id, entries).catch(this.onError);
    }
    this.flushing = undefined;
  }

  /** Resolves once everything written so far is stored. */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }
}
