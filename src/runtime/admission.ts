/**
 * Admission: a sandbox is created only when its memory, CPUs and disk fit what the host can give: never more than the
 * whole host (or data root) for one sandbox, and all together at most the host × an overcommit. Memory counts every
 * running sandbox's limit; CPUs count their quotas; disk counts the size of every disk image on the data root's file
 * system (running, paused and stopped sandboxes', build steps', volumes' there), sparse or not. Pure except
 * `hostCapacity`.
 */
import * as os from 'node:os';

export interface Resources {
  memoryMB: number;
  cpuCount: number;
  /** Disk in MB; left out where the sandboxes get no disk of their own (nothing to admit). */
  diskMB?: number;
}

export interface AdmissionLimits {
  /** Sum of sandbox memory limits may reach host memory × this (default 2: most sandboxes idle far below it). */
  memoryOvercommit: number;
  /** Sum of sandbox CPU quotas may reach host CPUs × this (default 32: quotas are caps, CPUs are shared by time). */
  cpuOvercommit: number;
  /**
   * Sum of the disks' sizes may reach the data root's size × this (default 1: the disks are sparse, so the promise
   * costs nothing until it is written; beyond 1 the disks together could fill the data root, and a full data root
   * fails every sandbox, build and the platform's own files at once, with no OOM killer to pick one victim).
   */
  diskOvercommit: number;
}

export const DEFAULT_ADMISSION: AdmissionLimits = { memoryOvercommit: 2, cpuOvercommit: 32, diskOvercommit: 1 };

/** A request the host cannot take: the platform answers it as a client error (429), nothing is made. */
export class AdmissionError extends Error {}

export function hostCapacity(): Resources {
  return { memoryMB: Math.floor(os.totalmem() / 1024 / 1024), cpuCount: os.cpus().length };
}

/** Why `request` cannot be admitted beside `committed` on `host`, or undefined when it can. */
export function admissionProblem(request: Resources, committed: Resources, host: Resources, limits: AdmissionLimits): string | undefined {
  const problems: string[] = [];
  // One sandbox never gets more than the whole host, whatever the overcommit.
  if (request.memoryMB > host.memoryMB) problems.push(`memory: ${request.memoryMB} MB asked, the host has ${host.memoryMB} MB`);
  if (request.cpuCount > host.cpuCount) problems.push(`CPUs: ${request.cpuCount} asked, the host has ${host.cpuCount}`);
  const disk = request.diskMB !== undefined && host.diskMB !== undefined ? { asked: request.diskMB, root: host.diskMB } : undefined;
  if (disk && disk.asked > disk.root) problems.push(`disk: ${disk.asked} MB asked, the data root has ${disk.root} MB`);
  if (problems.length > 0) return `the host cannot take this sandbox: ${problems.join('; ')}`;
  const memory = Math.floor(host.memoryMB * limits.memoryOvercommit);
  if (committed.memoryMB + request.memoryMB > memory)
    problems.push(
      `memory: ${request.memoryMB} MB asked, ${committed.memoryMB} MB of ${memory} MB committed (host ${host.memoryMB} MB × memoryOvercommit ${limits.memoryOvercommit})`,
    );
  const cpus = host.cpuCount * limits.cpuOvercommit;
  if (committed.cpuCount + request.cpuCount > cpus)
    problems.push(
      `CPUs: ${request.cpuCount} asked, ${committed.cpuCount} of ${cpus} committed (host ${host.cpuCount} × cpuOvercommit ${limits.cpuOvercommit})`,
    );
  const disks = disk && Math.floor(disk.root * limits.diskOvercommit);
  const diskCommitted = committed.diskMB ?? 0;
  if (disk && disks !== undefined && diskCommitted + disk.asked > disks)
    problems.push(
      `disk: ${disk.asked} MB asked, ${diskCommitted} MB of ${disks} MB committed (data root ${disk.root} MB × diskOvercommit ${limits.diskOvercommit})`,
    );
  return problems.length > 0 ? `the host cannot take this sandbox now: ${problems.join('; ')}` : undefined;
}

/** What a rendered config.json commits (its memory limit and CPU quota). */
export function committedBy(config: {
  linux?: { resources?: { memory?: { limit?: number }; cpu?: { quota?: number; period?: number } } };
}): Resources {
  const r = config.linux?.resources;
  const memoryMB = (r?.memory?.limit ?? 0) / 1024 / 1024;
  const cpuCount = r?.cpu?.quota && r.cpu.period ? r.cpu.quota / r.cpu.period : 0;
  return { memoryMB, cpuCount };
}
