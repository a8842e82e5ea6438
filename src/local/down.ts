/**
 * `sandbox-kit down`: removes the local system, whatever state it is in: after a clean `up`, halfway through a
 * crashed one, or when nothing is left (then it says so). The gateway first (it runs in the root namespace), then the
 * lab (every process in its namespaces, the namespaces, the host link, its state), then the local state directory.
 */
import { downLab, findLeftovers, hasLeftovers } from '../lab';
import { stopProcesses } from './processes';
import { localDir, platformStateDir, readLocalState, removeLocalDir } from './state';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cleanupLeftovers, unmountBelow } from '../runtime';

export interface LocalRemoved {
  anything: boolean;
  summary: string;
}

/** `purge`: also the platform's kept state (templates, layer cache, API key), which otherwise serves the next up. */
export async function downLocal(name: string, options: { stateBase?: string; purge?: boolean } = {}): Promise<LocalRemoved> {
  const state = readLocalState(name, options.stateBase);
  // The service removes its sandboxes when it stops; give it the time to.
  const stopped = state ? await stopProcesses(state.processes, 20_000) : 0;
  const leftovers = await findLeftovers(name);
  const lab = hasLeftovers(leftovers) ? await downLab(name) : undefined;
  // After a crash the platform could not remove its sandboxes: their containers, cgroups and mounts go here. The
  // platform's directory itself stays (its template cache serves the next up), and so do the sandboxes' files: a
  // paused sandbox is resumed from them after the next up (that platform removes those of the sandboxes it drops).
  const platformDir = state?.platform?.stateDir ?? platformStateDir(name);
  const instanceFile = join(platformDir, 'instance');
  let containers = 0;
  if (existsSync(instanceFile)) {
    const report = await cleanupLeftovers({
      instance: readFileSync(instanceFile, 'utf8').trim(),
      dataRoot: join(platformDir, 'runtime'),
      keepFiles: true,
    });
    containers = report.containers.length;
  }
  // Volumes' disks the platform had mounted when it crashed (it unmounts them when it stops): the images stay.
  await unmountBelow(join(platformDir, 'volumes'));
  const hadDir = existsSync(localDir(name, options.stateBase));
  removeLocalDir(name, options.stateBase);
  const purged = options.purge === true && existsSync(platformDir);
  if (purged) rmSync(dirname(platformDir), { recursive: true, force: true });
  const parts: string[] = [];
  if (stopped > 0) parts.push(`stopped ${stopped} process${stopped === 1 ? '' : 'es'} (gateway${state?.platform ? ', platform' : ''})`);
  if (containers > 0) parts.push(`${containers} leftover sandbox container${containers === 1 ? '' : 's'}`);
  if (lab) {
    parts.push(`lab ${name}: ${lab.processes} processes, ${lab.namespaces.length} namespaces${lab.hostLink ? ', the host link' : ''}`);
  }
  if (hadDir) parts.push('the state directory');
  if (purged) parts.push(`the kept platform state (${dirname(platformDir)})`);
  return { anything: parts.length > 0, summary: parts.length > 0 ? parts.join('; ') : `nothing of the local system ${name} was left` };
}
