/**
 * What the runtime places read-only into every sandbox at /opt/sandbox-kit, so templates need not install Node:
 * the agent bundle (dist/bundle, made by scripts/bundle.ts), the host's node binary (it needs only libc and
 * libstdc++, both in a minbase Debian), and tini-static as PID 1 (it reaps whatever the agent's children leave).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_AGENT_PORT } from '../contract/agent-port';
import { bundleDir } from '../util/project-root';
import type { BindMount } from './oci-config';

export const PAYLOAD_DIR = '/opt/sandbox-kit';
/** The variable that hands the agent its access token at start (`--token-env`). */
export const AGENT_TOKEN_ENV = 'SANDBOX_KIT_ACCESS_TOKEN';
export const TINI_STATIC = '/usr/bin/tini-static';

export interface AgentPayload {
  /** Host directory holding agent.js (and the native addons beside it). */
  bundleDir: string;
  node: string;
  tini: string;
}

export function defaultAgentPayload(): AgentPayload {
  return { bundleDir: bundleDir(), node: process.execPath, tini: TINI_STATIC };
}

/** Every problem with a payload at once, each naming the file and the fix. */
export function checkAgentPayload(p: AgentPayload): void {
  const problems: string[] = [];
  for (const f of ['agent.js', 'run.js']) {
    if (!existsSync(join(p.bundleDir, f)))
      problems.push(`${join(p.bundleDir, f)} not found: run 'npm run build && node dist/scripts/bundle.js'`);
  }
  if (!existsSync(p.node)) problems.push(`node binary ${p.node} not found`);
  if (!existsSync(p.tini)) problems.push(`${p.tini} not found: install the Debian package tini`);
  if (problems.length > 0) throw new Error(`agent payload incomplete: ${problems.join('; ')}`);
}

export function payloadBinds(p: AgentPayload): BindMount[] {
  return [
    { source: p.bundleDir, target: `${PAYLOAD_DIR}/bundle`, readonly: true },
    { source: p.node, target: `${PAYLOAD_DIR}/node`, readonly: true },
    { source: p.tini, target: `${PAYLOAD_DIR}/tini`, readonly: true },
  ];
}

/**
 * The V8 flags the agent's node runs with: a young generation of 1 MiB per semi-space (V8 sizes it from the host's
 * memory otherwise, up to 16 MiB, and garbage that dies young then sits in RSS) and an old generation capped at
 * AGENT_HEAP_MB. The agent's large data (ListDir answers, file bodies) lives in buffers outside the heap, held by
 * the agent's own budgets (docs/agent.md, "Memory"), so the heap itself stays small.
 */
export const AGENT_HEAP_MB = 96;
export function agentNodeFlags(): string[] {
  return ['--max-semi-space-size=1', `--max-old-space-size=${AGENT_HEAP_MB}`];
}

/**
 * tini as PID 1 (`-s`: also a subreaper should it ever not be PID 1), then the agent through the bundle's loader
 * (run.js: the same as `node agent.js`, with V8's code cache, which the bundle step makes with this node; the loader
 * gives the heap-size flags of agentNodeFlags() their defaults back once node has made the heap, so that V8 takes its
 * caches: scripts/bundle-loader.js).
 */
export function agentArgv(port: number = DEFAULT_AGENT_PORT, extra: string[] = []): string[] {
  return [
    `${PAYLOAD_DIR}/tini`,
    '-s',
    '--',
    `${PAYLOAD_DIR}/node`,
    ...agentNodeFlags(),
    `${PAYLOAD_DIR}/bundle/run.js`,
    'agent',
    '--port',
    String(port),
    ...extra,
  ];
}
