/**
 * Runs a TypeScript entry point in a plain Node process: the E2B SDK imports `tar` and `glob` dynamically and chalk
 * as ESM, which jest's module system cannot load. esbuild bundles the entry (our sources inlined, packages left to
 * Node), and the child prints one JSON object per line.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleForNode } from './node-bundle';

const ROOT = join(__dirname, '..', '..');

export interface ScriptResult {
  code: number;
  stdout: string[];
  stderr: string;
}

export interface ScriptOptions {
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  onLine?: (line: string) => void;
  timeoutMs?: number;
}

/** Runs an entry that takes one JSON argument and prints JSON lines; every line that is an object reaches onMessage. */
export async function runScript(
  entry: string,
  input: unknown,
  onMessage: (message: Record<string, unknown>) => void,
  timeoutMs = 600_000,
): Promise<ScriptResult> {
  return runEntry(entry, {
    args: [JSON.stringify(input)],
    timeoutMs,
    onLine: (line) => line.startsWith('{') && onMessage(JSON.parse(line) as Record<string, unknown>),
  });
}

export async function runEntry(entry: string, o: ScriptOptions): Promise<ScriptResult> {
  const dir = await mkdtemp(join(tmpdir(), 'sk-tpl-script-'));
  try {
    const outfile = join(dir, 'script.js');
    bundleForNode(entry, outfile);
    const child = spawn(process.execPath, [outfile, ...o.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: o.cwd ?? ROOT,
      env: { ...process.env, ...o.env, NODE_PATH: join(ROOT, 'node_modules') },
    });
    let stderr = '';
    const stdout: string[] = [];
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      stdout.push(line);
      o.onLine?.(line);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 600_000);
    const code = await new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? 1)));
    clearTimeout(timer);
    return { code, stdout, stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
