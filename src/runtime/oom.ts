/**
 * Who the kernel's OOM killer picks. It kills the process with the highest badness (memory use plus
 * oom_score_adj scaled to the memory limit that ran out: the sandbox's for an OOM inside it, the host's for a
 * host-wide one). Raising a process's oom_score_adj needs no privilege; lowering it needs CAP_SYS_RESOURCE, which
 * some hosts lack even for root. So the order is made by raising only:
 *
 * - the container's first process (tini, and so the agent) starts at AGENT_OOM_SCORE_ADJ, above the platform,
 *   the gateway and Redis (0): in a host-wide OOM every sandbox process is picked before them;
 * - the agent reads CHILD_OOM_SCORE_ADJ_ENV from its environment and writes that value to
 *   /proc/<pid>/oom_score_adj of every process it starts (and does not pass the variable on). Every command and the
 *   template's start command outrank the agent by 90% of the sandbox's memory limit, so an OOM inside a sandbox
 *   kills the hog, never the agent.
 * Build steps run at CHILD_OOM_SCORE_ADJ as a whole.
 */
export const AGENT_OOM_SCORE_ADJ = 100;
export const CHILD_OOM_SCORE_ADJ = 1000;
