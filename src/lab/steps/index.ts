/** The steps of `labUp`, in order, and the one place their results enter the lab's state. */
import { writeState, type LabState } from '../state';
import { checkStep } from './check';
import type { LabStateAddition, LabStep } from './context';
import { proxyHostStep } from './proxy-host';
import { sandboxesStep } from './sandboxes';
import { servicesStep } from './services';
import { topologyStep } from './topology';

export { prepare, labPrerequisites, checkLabRequest, type LabRequest } from './prepare';
export type { LabStep, LabStepContext, LabStateAddition } from './context';

/** After `prepare`: topology, services, proxy host, sandboxes, check. */
export const LAB_STEPS: readonly LabStep[] = [topologyStep, servicesStep, proxyHostStep, sandboxesStep, checkStep];

/** Merges what a step added into the state and writes the state file. */
export function recordStep(state: LabState, added: LabStateAddition): LabState {
  const { processes, etcLayers, runDirs, ...rest } = added;
  Object.assign(state, rest);
  if (processes) state.processes.push(...processes);
  if (etcLayers) Object.assign(state.etcLayers, etcLayers);
  if (runDirs) Object.assign(state.runDirs, runDirs);
  writeState(state);
  return state;
}
