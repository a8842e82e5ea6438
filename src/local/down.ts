/**
 * `sandbox-kit down`: removes the local system, whatever state it is in: after a clean `up`, halfway through a
 * crashed one, or when nothing is left (then it says so). The gateway first (it runs in the root namespace), then the
 * lab (every process in its namespaces, the namespaces, the host link, its state), then the local state directory.
 */
import { downLab, findLeftovers, hasLeftovers } from '../lab';
import { stopProcesses } from './processes';
import { localDir, readLocalState, removeLocalDir } from './state';
import { existsSync } from 'node:fs';

export interface LocalRemoved {
  anything: boolean;
  summary: string;
}

export async function downLocal(name: string, options: { stateBase?: string } = {}): Promise<LocalRemoved> {
  const state = readLocalState(name, options.stateBase);
  const stopped = state ? await stopProcesses(state.processes) : 0;
  const leftovers = await findLeftovers(name);
  const lab = hasLeftovers(leftovers) ? await downLab(name) : undefined;
  const hadDir = existsSync(localDir(name, options.stateBase));
  removeLocalDir(name, options.stateBase);
  const parts: string[] = [];
  if (stopped > 0) parts.push(`stopped ${stopped} process${stopped === 1 ? '' : 'es'} (gateway)`);
  if (lab) {
    parts.push(`lab ${name}: ${lab.processes} processes, ${lab.namespaces.length} namespaces${lab.hostLink ? ', the host link' : ''}`);
  }
  if (hadDir) parts.push('the state directory');
  return { anything: parts.length > 0, summary: parts.length > 0 ? parts.join('; ') : `nothing of the local system ${name} was left` };
}
