/** The agent's own OOM score adjustment (the runtime sets -1000 for it); 0 where /proc does not say. */
import * as fs from 'node:fs';

export function readOwnOomScoreAdj(): number {
  try {
    const n = Number(fs.readFileSync('/proc/self/oom_score_adj', 'utf8').trim());
    return Number.isInteger(n) ? n : 0;
  } catch {
    return 0;
  }
}
