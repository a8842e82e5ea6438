/**
 * The proxy client inside a lab sandbox: the rendered client files at /etc/sandbox-kit (through the sandbox's /etc
 * layer), started by the rendered client-start script exactly as a template's start command runs it.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import type { Artifact } from '../render';
import { SANDBOX_DIR } from '../render';
import type { LayerFile } from './etc-layer';
import { inNamespace } from './run';
import type { ClientMode } from '../config';

/** The artifacts a sandbox needs, by file name; the start scripts sit beside the configs they read. */
export const SANDBOX_ARTIFACTS = [
  'client-local.json',
  'client-transparent.json',
  'nat-chain.sh',
  'client-start-local.sh',
  'client-start-transparent.sh',
] as const;

export function sandboxClientFiles(artifacts: readonly Artifact[]): LayerFile[] {
  return SANDBOX_ARTIFACTS.map((name) => {
    const artifact = artifacts.find((a) => a.name === name);
    if (!artifact) throw new Error(`renderArtifacts() gave no ${name}`);
    return { path: `${SANDBOX_DIR}/${name}`, content: artifact.content, mode: artifact.mode };
  });
}

export function clientStartScript(mode: ClientMode): string {
  return `${SANDBOX_DIR}/client-start-${mode}.sh`;
}

/**
 * Runs the start script in the sandbox and waits for it to finish (it returns once the client listens). Its output
 * goes to a log file: the daemons it starts may keep inherited descriptors open, so pipes would never close.
 */
export function startClient(
  ns: string,
  etcLayer: string,
  runDir: string,
  mode: ClientMode,
  log: string,
  timeoutMs = 20_000,
): Promise<void> {
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const fd = openSync(log, 'a', 0o600);
  const argv = inNamespace(ns, [clientStartScript(mode)], etcLayer);
  return new Promise<void>((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', fd, fd], env: { ...process.env, SANDBOX_KIT_RUN_DIR: runDir } });
    closeSync(fd);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const tail = readFileSync(log, 'utf8').split('\n').slice(-10).join('\n');
      reject(new Error(`${clientStartScript(mode)} in ${ns} failed (code ${code}, signal ${signal}); log ${log}:\n${tail}`));
    });
  });
}
