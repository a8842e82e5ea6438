/**
 * Caps each sandbox's console log (the file that receives the stdout and stderr of tini and the agent, which any
 * process in the sandbox can write to through /proc/1/fd/1). The file is opened O_APPEND for the container, so
 * it can be cut from outside at any time: the next write lands at the new end. An inotify watch per file reacts to
 * every write burst; past `maxBytes` the file keeps its last quarter behind a line saying it was cut.
 */
import * as fs from 'node:fs';

export const DEFAULT_CONSOLE_LOG_BYTES = 1024 * 1024;

/** Cuts `file` to its last `keep` bytes behind a marker line, when it is larger than `maxBytes`. */
export function capFile(file: string, maxBytes: number): boolean {
  let fd: number | undefined;
  try {
    // Append mode for our writes too: the container's may land between the cut and ours, never under them.
    fd = fs.openSync(file, 'a+');
    const size = fs.fstatSync(fd).size;
    if (size <= maxBytes) return false;
    const keep = Math.floor(maxBytes / 4);
    const tail = Buffer.alloc(keep);
    const read = fs.readSync(fd, tail, 0, keep, size - keep);
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, `[console log over ${maxBytes} bytes: earlier output dropped]\n`);
    fs.writeSync(fd, tail.subarray(0, read));
    return true;
  } catch {
    return false; // gone with its sandbox
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export class ConsoleLogCap {
  private readonly watchers = new Map<string, fs.FSWatcher>();

  constructor(readonly maxBytes: number = DEFAULT_CONSOLE_LOG_BYTES) {
    if (!(Number.isInteger(maxBytes) && maxBytes >= 4096))
      throw new Error(`console log cap must be an integer of at least 4096 bytes, got ${maxBytes}`);
  }

  watch(file: string): void {
    if (this.watchers.has(file)) return;
    capFile(file, this.maxBytes);
    try {
      const watcher = fs.watch(file, { persistent: false }, () => capFile(file, this.maxBytes));
      watcher.on('error', () => this.unwatch(file));
      this.watchers.set(file, watcher);
    } catch {
      // the file is already gone
    }
  }

  unwatch(file: string): void {
    this.watchers.get(file)?.close();
    this.watchers.delete(file);
  }
}
