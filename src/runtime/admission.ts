/**
 * Admission: a sandbox is created only when its memory and CPUs fit what the host can give: never more than the
 * whole host for one sandbox, and all together at most the host × an overcommit. Memory counts every running sandbox's limit; CPUs count their quotas. Pure except `hostCapacity`.
 */
import * as os from 'node:os';

export interface Resources {
  memoryMB: number;
  cpuCount: number;
}

export interface AdmissionLimits {
  /** Sum of sandbox memory limits may reach host memory × this (default 2: most sandboxes idle far below it). */
  memoryOvercommit: number;
  /** Sum of sandbox CPU quotas may reach host CPUs × this (default 32: quotas are caps, CPUs are shared by time). */
  cpuOvercommit: number;
}

export const DEFAULT_ADMISSION: AdmissionLimits = { memoryOvercommit: 2, cpuOvercommit: 32 };

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
