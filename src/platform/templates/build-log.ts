/**
 * A build's log: appended to Redis in order as lines come, within the build's limits (docs/security.md, Limits). A
 * line longer than `lineBytes` is cut there and ends with a marker saying how much was cut (builds.logLineBytes).
 * The steps' output is kept up to `totalBytes` per build (builds.logBytes): then one marker line says the rest is not
 * kept, and the build goes on. The builder's own lines (step headers, the outcome) are always kept. The last lines
 * stay in memory either way, for the failure reason.
 */
import { utf8Boundary } from '../../util/bounded-lines';
import type { TemplateStore } from './store';
import type { LogEntry, LogLevel } from './wire';

export interface LogCaps {
  lineBytes: number;
  totalBytes: number;
}

/** How many of the newest entries stay in memory for the failure reason. */
const TAIL = 64;

/** A line cut to `lineBytes` (at a character boundary), with a marker when anything was cut. */
export function cutLine(message: string, lineBytes: number, alreadyCut = 0): string {
  const bytes = Buffer.from(message, 'utf8');
  let kept = bytes;
  if (bytes.length > lineBytes) kept = bytes.subarray(0, utf8Boundary(bytes.subarray(0, lineBytes)));
  const cut = alreadyCut + bytes.length - kept.length;
  if (cut === 0) return message;
  return `${kept.toString('utf8')} [... ${cut} more bytes cut: lines are kept up to ${lineBytes} bytes (builds.logLineBytes)]`;
}

export class BuildLog {
  private readonly recent: LogEntry[] = [];
  private chain: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private outputBytes = 0;
  private full = false;

  constructor(
    private readonly store: TemplateStore,
    private readonly buildID: string,
    private readonly caps: LogCaps,
  ) {}

  /** The builder's own line: always kept (cut to the line cap). */
  write(level: LogLevel, message: string, step?: string): void {
    this.keep(this.entry(level, cutLine(message, this.caps.lineBytes), step), true);
  }

  /** A line of a step's (or the start check's) output: kept while the build's log volume lasts. */
  output(level: LogLevel, message: string, step?: string, cutBytes = 0): void {
    const entry = this.entry(level, cutLine(message, this.caps.lineBytes, cutBytes), step);
    if (this.full) {
      this.keep(entry, false);
      return;
    }
    const size = Buffer.byteLength(entry.message);
    if (this.outputBytes + size > this.caps.totalBytes) {
      this.full = true;
      this.keep(
        this.entry(
          'warn',
          `Log limit reached: this build's output past ${this.caps.totalBytes} bytes is not kept (builds.logBytes); the build goes on`,
          step,
        ),
        true,
      );
      this.keep(entry, false);
      return;
    }
    this.outputBytes += size;
    this.keep(entry, true);
  }

  /** The newest lines of `step` still in memory (also those past the volume cap), oldest first. */
  lastOf(step: string, count: number): LogEntry[] {
    return this.recent.filter((e) => e.step === step).slice(-count);
  }

  async flush(): Promise<void> {
    await this.chain;
    if (this.failure) throw this.failure;
  }

  private entry(level: LogLevel, message: string, step?: string): LogEntry {
    return { timestamp: new Date().toISOString(), level, message, ...(step === undefined ? {} : { step }) };
  }

  private keep(entry: LogEntry, store: boolean): void {
    this.recent.push(entry);
    if (this.recent.length > TAIL) this.recent.shift();
    if (!store) return;
    this.chain = this.chain
      .then(() => this.store.appendLog(this.buildID, entry))
      .catch((err: Error) => {
        this.failure ??= err;
      });
  }
}
