/**
 * What every procedure served through @connectrpc/connect needs from the agent, and the per-call values the server
 * computes before handing a request to the Connect router (its deadline, parsed once by the contract's parser).
 */
import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import type { Accounts } from './accounts';
import type { BufferPool } from './buffer-pool';
import type { EntryContext } from './filesystem/entry';
import type { AgentOptions } from './options';
import type { ProcessRegistry } from './process/registry';
import type { AgentState } from './state';
import type { WatcherRegistry } from './filesystem/watchers';

export interface AgentServices {
  options: AgentOptions;
  state: AgentState;
  accounts: Accounts;
  entries: EntryContext;
  processes: ProcessRegistry;
  watchers: WatcherRegistry;
  /** The 64 KiB buffers of ListDir answers and walks and of downloads, reused (buffer-pool.ts). */
  buffers: BufferPool;
  /** The agent's own uid, and the OOM score its children get (read once at start). */
  agentUid: number;
  childOomScoreAdj: number | undefined;
}

/** The call's Connect-Timeout-Ms in milliseconds, or undefined when the client set none. */
export const deadlineKey = createContextKey<number | undefined>(undefined, { description: 'Connect-Timeout-Ms' });

export function callTimeoutMs(ctx: HandlerContext): number | undefined {
  return ctx.values.get(deadlineKey);
}

/** Keepalive-Ping-Interval (seconds) as milliseconds; 90 s when absent or not a positive integer. */
export function keepaliveMs(ctx: HandlerContext): number {
  const raw = ctx.requestHeader.get('keepalive-ping-interval');
  const s = raw !== null && /^[0-9]{1,6}$/.test(raw) ? Number(raw) : 0;
  return (s > 0 ? s : 90) * 1000;
}
