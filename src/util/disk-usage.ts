import * as fs from 'node:fs';
import * as path from 'node:path';
import { exec } from './exec';

/** Bytes a directory tree takes on disk (allocated blocks, `du`; one file system, links not followed). */
export async function allocatedBytes(dir: string): Promise<number> {
  const r = await exec(['du', '-s', '-x', '-B1', dir], { timeoutMs: 120_000 });
  const bytes = Number(/^(\d+)/.exec(r.stdout)?.[1]);
  if (r.code !== 0 || !Number.isFinite(bytes)) throw new Error(`du ${dir} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return bytes;
}

/**
 * Bytes removing the trees in `dirs` would give back, per tree: the blocks of every entry below each (the trees'
 * own top directories not counted), a file with hard links only when all its links are in these trees (counted in
 * the first tree that has one). A missing tree counts 0. Does not cross into other file systems.
 */
export async function freedBytes(dirs: readonly string[]): Promise<number[]> {
  const totals = dirs.map(() => 0);
  const linked = new Map<string, { links: number; seen: number; bytes: number; tree: number }>();
  for (const [tree, dir] of dirs.entries()) {
    const top = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!top?.isDirectory()) continue;
    const walk = async (at: string): Promise<void> => {
      for (const name of await fs.promises.readdir(at)) {
        const p = path.join(at, name);
        const st = await fs.promises.lstat(p);
        if (st.dev !== top.dev) continue;
        const bytes = st.blocks * 512;
        if (st.isDirectory()) {
          totals[tree]! += bytes;
          await walk(p);
        } else if (st.nlink <= 1) totals[tree]! += bytes;
        else {
          const key = `${st.dev}:${st.ino}`;
          const entry = linked.get(key) ?? { links: st.nlink, seen: 0, bytes, tree };
          entry.seen++;
          linked.set(key, entry);
        }
      }
    };
    await walk(dir);
  }
  for (const e of linked.values()) if (e.seen >= e.links) totals[e.tree]! += e.bytes;
  return totals;
}
