/**
 * What the sandboxes' config.json files commit (committedBy in admission.ts), each file read and parsed once per
 * version of it. Admission sums the memory and CPUs of every sandbox on the data root at each create. Reading and
 * parsing every config again (tens of KiB of JSON each, with the seccomp profile), and an error thrown for every entry
 * that was not a sandbox's directory, made each create's admission take about 0.15 ms more per sandbox already there:
 * 35 ms with 200. A file is known by its inode, size and modification time (to the microsecond): a rewritten config (a
 * restart writes it again) is read again, and one gone is forgotten.
 *
 * The configs this process writes itself (`wrote`: every sandbox it creates or restarts) are known without a stat at
 * all: a stat costs 7-15 microseconds on a disk's mount, 3 ms a create with 200 sandboxes. Only this process writes
 * in its data directory, so what it wrote stays true until it writes again or removes the sandbox (`forget`); a
 * sandbox directory that goes without a `forget` drops out of the next sum, as the caller lists only those there.
 */
import * as fs from 'node:fs';
import { committedBy, type Resources } from './admission';

interface Known {
  /** `ino:size:mtime` of the file read, or undefined for a config this process wrote (trusted without a stat). */
  version: string | undefined;
  resources: Resources;
}

export class CommittedConfigs {
  private known = new Map<string, Known>();

  /** `config` was just written to `file` by this process: it counts as such until written again or forgotten. */
  wrote(file: string, config: Parameters<typeof committedBy>[0]): void {
    this.known.set(file, { version: undefined, resources: committedBy(config) });
  }

  /** `file` is being removed by this process: it counts nothing from now on (until it is written again). */
  forget(file: string): void {
    this.known.delete(file);
  }

  /** The sum over `files`; a file that is missing or not a config (a sandbox being made or removed) counts nothing. */
  sum(files: Iterable<string>): Resources {
    const sum: Resources = { memoryMB: 0, cpuCount: 0 };
    const seen = new Map<string, Known>();
    for (const file of files) {
      const entry = this.read(file);
      if (entry === undefined) continue;
      seen.set(file, entry);
      sum.memoryMB += entry.resources.memoryMB;
      sum.cpuCount += entry.resources.cpuCount;
    }
    this.known = seen;
    return sum;
  }

  private read(file: string): Known | undefined {
    const known = this.known.get(file);
    if (known !== undefined && known.version === undefined) return known;
    let st: fs.Stats | undefined;
    try {
      // A missing file answers undefined, not a thrown error: making one costs tens of microseconds.
      st = fs.statSync(file, { throwIfNoEntry: false });
    } catch {
      return undefined; // its directory is not one (ENOTDIR)
    }
    if (st === undefined || !st.isFile()) return undefined;
    const version = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (known?.version === version) return known;
    try {
      return { version, resources: committedBy(JSON.parse(fs.readFileSync(file, 'utf8'))) };
    } catch {
      return undefined; // being written or removed: counted once it is whole
    }
  }
}
