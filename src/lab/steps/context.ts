/**
 * What every step of `labUp` sees, and the shape of a step. A step builds one part of the lab and returns what it
 * adds to the lab's state; `recordStep` (the one place the state grows) merges it and writes the state file, so a
 * crashed run always leaves a state file that names everything built so far.
 */
import type { ClientMode, StackConfig } from '../../config';
import type { Artifact, proxyHostFiles } from '../../render';
import type { ProgressFn } from '../progress';
import type { LabState } from '../state';

export interface LabStepContext {
  name: string;
  mode: ClientMode;
  /** How many sandboxes to build. */
  sandboxCount: number;
  hostLink: boolean;
  config: StackConfig;
  progress: ProgressFn;
  /** Everything the renderers made for this lab (proxy host files and sandbox files). */
  artifacts: Artifact[];
  hostFiles: ReturnType<typeof proxyHostFiles>;
}

/** What a step adds: `processes` are appended, `etcLayers` and `runDirs` merged, anything else replaced. */
export type LabStateAddition = Partial<Omit<LabState, 'version' | 'name' | 'dir' | 'config'>>;

export interface LabStep {
  /** The name progress lines carry: topology, services, proxy, sandbox, check. */
  name: string;
  run(ctx: LabStepContext, state: Readonly<LabState>): Promise<LabStateAddition>;
}
