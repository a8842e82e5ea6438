/** Helpers for the lab's e2e tests: unique lab names, curl inside namespaces, the built CLI. */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { curlArgv } from '../../src/lab/egress-check';
import { run, type RunResult } from '../../src/lab/run';
import { waitFor } from '../../src/util/poll';
import type { Lab, LabProgress } from '../../src/lab';
import { CLI } from './cli';

/** A lab name no other test file uses (jest runs files in parallel): prefix + 4 random hex characters. */
export function uniqueLabName(prefix: string): string {
  return `${prefix}${randomBytes(2).toString('hex')}`;
}

/** The lab runs built files inside namespaces, so the tests need `npm run build` (npm test does it). */
export function requireBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} missing: run 'npm run build' before the lab e2e tests`);
}

export function recorder(): { events: LabProgress[]; onProgress: (e: LabProgress) => void } {
  const events: LabProgress[] = [];
  return { events, onProgress: (e) => events.push(e) };
}

/** curl from a lab node; `socks` goes through a SOCKS5 proxy. Resolves with curl's exit code and output. */
export function curlFrom(lab: Lab, node: string, url: string, socks?: string): Promise<RunResult> {
  return lab.exec(node, curlArgv(url, socks));
}

export async function whoamiFrom(lab: Lab, node: string, socks?: string): Promise<string> {
  const result = await curlFrom(lab, node, `http://${lab.plan.web}/`, socks);
  if (result.code !== 0) throw new Error(`curl from ${node} failed (${result.code}): ${result.stderr}`);
  return result.stdout.trim();
}

export function cli(args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return run([process.execPath, CLI, ...args], { timeoutMs });
}

/** Namespaces of one lab that still exist. */
export async function namespacesOf(labName: string): Promise<string[]> {
  const out = await run(['ip', 'netns', 'list']);
  return out.stdout
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n.startsWith(`sk-${labName}-`));
}

/** Polls until `check` gives a value (15 s by default). */
export function waitUntil<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  return waitFor(what, check, { timeoutMs, intervalMs: 100 });
}
