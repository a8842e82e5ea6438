/**
 * The messages between a process and its spawn helper (spawn-helper.ts, spawn-helper-main.ts), over node's IPC
 * channel: a command to run, a kill of one that runs, and the command's result.
 */
import type { ExecOptions, ExecResult } from './exec-here';

/** Run argv with these options (the abort signal becomes a KillRequest). */
export interface RunRequest {
  kind: 'run';
  id: number;
  argv: string[];
  options: Omit<ExecOptions, 'signal'>;
}

/** Kill the command of request `id` now, as its abort signal would (it resolves with code 130). */
export interface KillRequest {
  kind: 'kill';
  id: number;
}

export type HelperRequest = RunRequest | KillRequest;

export interface HelperReply {
  id: number;
  result: ExecResult;
}
