import { createHash } from 'node:crypto';
import { DEFAULT_TEAM_ID } from '../teams/model';
import type { Step } from './wire';

/**
 * Layer cache keys form a chain: the key after a step hashes the key before it with the step's JSON (type, args, and
 * for COPY the files hash). ENV, WORKDIR and USER are links of the chain too, so a RUN after a changed ENV is not
 * reused. `force` is not part of the key: it decides whether the cache is consulted, not what the layer is.
 * The version string changes when the builder changes what a step produces. The chain starts at the team: a team's
 * builds never reuse another team's layers (whose steps it did not see run), only their own.
 */
export const BUILDER_VERSION = 'sandbox-kit-builder-1';

export function baseKey(fromImage: string, baseRootfs: string, teamID: string = DEFAULT_TEAM_ID): string {
  const parts = teamID === DEFAULT_TEAM_ID ? [BUILDER_VERSION, fromImage, baseRootfs] : [BUILDER_VERSION, fromImage, baseRootfs, teamID];
  return sha256(JSON.stringify(parts));
}

export function stepKey(parentKey: string, step: Pick<Step, 'type' | 'args' | 'filesHash'>): string {
  return sha256(JSON.stringify([parentKey, step.type, step.args, step.filesHash ?? null]));
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
