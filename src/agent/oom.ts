/**
 * The oom_score_adj the agent's children get: the runtime exempts the agent from OOM kills (-1000) and names the
 * children's score in an environment variable (src/runtime/oom.ts), which the agent reads once and never passes on.
 */
import { CHILD_OOM_SCORE_ADJ_ENV } from '../contract/child-oom';

export function childOomScoreAdj(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[CHILD_OOM_SCORE_ADJ_ENV];
  if (raw === undefined || !/^-?[0-9]{1,4}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= -1000 && n <= 1000 ? n : undefined;
}
