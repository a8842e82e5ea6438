/**
 * An out-of-memory kill inside a sandbox must hit the memory hog, never tini or the agent (the sandbox would be
 * gone). The kernel picks the process with the highest badness (memory use plus oom_score_adj scaled to the
 * limit); -1000 exempts a process entirely.
 *
 * - Where the host may lower oom_score_adj (CAP_SYS_RESOURCE), the container's first process (tini, and so the
 *   agent) gets AGENT_OOM_SCORE_ADJ. Some hosts lack that capability (then it stays at 0).
 * - The agent reads CHILD_OOM_SCORE_ADJ_ENV from its environment and, when set, writes that value to
 *   /proc/<pid>/oom_score_adj of every process it starts (raising a value needs no privilege, and the agent is
 *   root in the sandbox), and does not pass the variable on. So every command and the template's start command
 *   outrank the agent, whatever the host allows.
 */
import * as fs from 'node:fs';

export const AGENT_OOM_SCORE_ADJ = -1000;
export const CHILD_OOM_SCORE_ADJ = 500;
export const CHILD_OOM_SCORE_ADJ_ENV = 'SANDBOX_KIT_CHILD_OOM_SCORE_ADJ';

const CAP_SYS_RESOURCE = 24n;

/** Whether this process may lower an oom_score_adj (parsed from a /proc/<pid>/status text). */
export function canLowerOomScore(procStatus: string): boolean {
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(procStatus);
  return m !== null && ((BigInt(`0x${m[1]}`) >> CAP_SYS_RESOURCE) & 1n) === 1n;
}

export function hostCanLowerOomScore(): boolean {
  return canLowerOomScore(fs.readFileSync('/proc/self/status', 'utf8'));
}
