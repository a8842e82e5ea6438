/**
 * What the sandboxes' config.json files commit (committedBy in admission.ts), each file read and parsed once per
 * version of it. Admission sums the memory and CPUs of every sandbox on the data root at each create. Reading and
 * parsing every config again (tens of KiB of JSON each, with the seccomp profile), and an error thrown for every entry
 * that was not a sandbox's directory, made each create's admission take about 0.15 ms more per sandbox already there:
 * 35 ms with 200. A file is known by its inode, size and modification time (to the microsecond): a rewritten config (a
 * restart writes it again) is read again, and one gone is forgotten.
 */
import * as fs from 'node:fs';
import { committedBy, type Resources } from './admission';

export class CommittedConfigs {
  private known = new Map<string, { version: string; resources: Resources }>();

  /** The sum over `files`; a file that is missing or not a config (a sandbox being made or removed) counts nothing. */
  sum(files: Iterable<string>): Resources {
    const sum: Resources = { memoryMB: 0, cpuCount: 0 };
    const seen = new Map<string, { version: string; resources: Resources }>();
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

  private read(file: string): { version: string; resources: Resources } | undefined {
    let st: fs.Stats | undefined;
    try {
      // A missing file answers undefined, not a thrown error: making one costs tens of microseconds.
      st = fs.statSync(file, { throwIfNoEntry: false });
    } catch {
      return undefined; // its directory is not one (ENOTDIR)
    }
    if (st === undefined || !st.isFile()) return undefined;
    const version = `${st.ino}:${st.size}:${st.mtimeMs}`;
    const known = this.known.get(file);
    if (known?.version === version) return known;
    try {
      return { version, resources: committedBy(JSON.parse(fs.readFileSync(file, 'utf8'))) };
    } catch {
      return undefined; // being written or removed: counted once it is whole
    }
  }
}
