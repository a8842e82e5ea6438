/**
 * Removing a lab: every process in its namespaces, the namespaces (their veths, bridges and iptables rules go with
 * them), the optional root-namespace veth, and the state directory. Works from the state file when there is one and
 * from the namespace prefix when there is not (a run killed before it wrote its state), and only ever touches the
 * named lab.
 */
import { existsSync, rmSync } from 'node:fs';
import { hostLinkName, labDir, namespacePrefix } from './names';
import { sleep } from '../util/poll';
import { isSameProcess, readProcessStart, startTimeOf } from '../util/process-start';
import { signalProcess } from '../util/signal';
import { must, run } from './run';
import { readState, type LabProcess } from './state';

export interface Leftovers {
  namespaces: string[];
  hostLink: boolean;
  stateDir: boolean;
}

export async function listNamespaces(): Promise<string[]> {
  const out = await must(['ip', 'netns', 'list']);
  // Lines look like "name" or "name (id: 3)".
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}

async function linkExists(device: string): Promise<boolean> {
  return (await run(['ip', 'link', 'show', 'dev', device])).code === 0;
}

export async function findLeftovers(lab: string, base?: string): Promise<Leftovers> {
  const prefix = namespacePrefix(lab);
  const state = readState(lab, base);
  const present = await listNamespaces();
  const fromState = state ? Object.values(state.namespaces) : [];
  const namespaces = present.filter((n) => n.startsWith(prefix) || fromState.includes(n));
  return { namespaces, hostLink: await linkExists(hostLinkName(lab)), stateDir: existsSync(labDir(lab, base)) };
}

export function hasLeftovers(l: Leftovers): boolean {
  return l.namespaces.length > 0 || l.hostLink || l.stateDir;
}

async function pidsIn(ns: string): Promise<number[]> {
  const result = await run(['ip', 'netns', 'pids', ns]);
  if (result.code !== 0) return [];
  return result.stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

/**
 * Stops every process in the namespaces and the state's processes that still run (a pid of the state whose start time
 * differs is another process now, and is left alone): SIGTERM, a grace period, then SIGKILL, each only to a process
 * that is still the one found.
 */
async function stopProcesses(namespaces: string[], recorded: LabProcess[]): Promise<number> {
  const found = new Map<number, string>();
  for (const p of recorded) if (isSameProcess(p.pid, p.startTime)) found.set(p.pid, p.startTime);
  for (const ns of namespaces) for (const pid of await pidsIn(ns)) if (!found.has(pid)) found.set(pid, startTimeOf(pid));
  found.delete(process.pid);
  const running = () => [...found].filter(([pid, startTime]) => isSameProcess(pid, startTime)).map(([pid]) => pid);
  // Ended but not yet reaped (a zombie: its reaper is the host's init, not this process) is still in the process table.
  const listed = () => [...found].filter(([pid, startTime]) => readProcessStart(pid)?.startTime === startTime).length;
  for (const pid of running()) signalProcess(pid, 'SIGTERM');
  const deadline = Date.now() + 3000;
  // Until they are gone from the process table, within the grace period.
  while (listed() > 0 && Date.now() < deadline) await sleep(50);
  for (const pid of running()) signalProcess(pid, 'SIGKILL');
  // Processes started meanwhile (a restart by the supervisor racing its own SIGTERM) are caught here.
  for (const ns of namespaces) for (const pid of await pidsIn(ns)) if (pid !== process.pid) signalProcess(pid, 'SIGKILL');
  return found.size;
}

export interface RemovedLab {
  namespaces: string[];
  processes: number;
  hostLink: boolean;
  stateDir: boolean;
}

export async function removeLab(lab: string, base?: string): Promise<RemovedLab> {
  const state = readState(lab, base);
  const leftovers = await findLeftovers(lab, base);
  const processes = await stopProcesses(leftovers.namespaces, state?.processes ?? []);
  // The host link goes first: its peer lives in the sandbox-host namespace, whose deletion the kernel finishes in the
  // background, so a link seen before that deletion may vanish under our feet after it.
  const hostLink = hostLinkName(lab);
  if (await linkExists(hostLink)) {
    const result = await run(['ip', 'link', 'delete', 'dev', hostLink]);
    if (result.code !== 0 && (await linkExists(hostLink)))
      throw new Error(`cannot delete the host link ${hostLink}: ${result.stderr.trim()}`);
  }
  for (const ns of leftovers.namespaces) {
    const result = await run(['ip', 'netns', 'delete', ns]);
    if (result.code !== 0 && (await listNamespaces()).includes(ns)) {
      throw new Error(`cannot delete namespace ${ns}: ${result.stderr.trim()}`);
    }
  }
  if (leftovers.stateDir) rmSync(labDir(lab, base), { recursive: true, force: true });
  return { namespaces: leftovers.namespaces, processes, hostLink: leftovers.hostLink, stateDir: leftovers.stateDir };
}
