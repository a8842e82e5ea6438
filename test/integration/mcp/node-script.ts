/**
 * Runs a TypeScript script in a plain Node process and returns its stdout: the E2B SDK loads chalk as ESM, which
 * jest's module system cannot. esbuild bundles the script (our sources inlined, packages left to Node).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { REPO } from './support';

export async function runScript(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 300_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-script-'));
  try {
    const outfile = path.join(dir, 'script.js');
    buildSync({
      entryPoints: [entry],
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile,
      logLevel: 'error',
    });
    const child = spawn(process.execPath, [outfile, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_PATH: path.join(REPO, 'node_modules'), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? 1)));
    clearTimeout(timer);
    return { code, stdout, stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
