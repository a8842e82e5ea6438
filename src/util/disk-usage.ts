import { exec } from './exec';

/** Bytes a directory tree takes on disk (allocated blocks, `du`; one file system, links not followed). */
export async function allocatedBytes(dir: string): Promise<number> {
  const r = await exec(['du', '-s', '-x', '-B1', dir], { timeoutMs: 120_000 });
  const bytes = Number(/^(\d+)/.exec(r.stdout)?.[1]);
  if (r.code !== 0 || !Number.isFinite(bytes)) throw new Error(`du ${dir} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return bytes;
}
