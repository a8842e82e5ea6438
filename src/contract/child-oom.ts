/**
 * Set by the runtime in a sandbox's first process (the agent), read by the agent: the oom_score_adj of every process
 * the agent starts (src/runtime/oom.ts says why). The agent does not pass it on.
 */
export const CHILD_OOM_SCORE_ADJ_ENV = 'SANDBOX_KIT_CHILD_OOM_SCORE_ADJ';
