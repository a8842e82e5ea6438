import { z } from 'zod';
import { fraction, integer } from './fields';

/**
 * `limits`: what one sandbox may take and how far the host's memory and CPUs are shared out. The platform passes
 * them to its runtime (processes, open files, console log, disk, admission) and to the template builder (what a
 * template may ask for). The defaults are the runtime's own (a unit test holds them equal).
 */
export const limitFields = {
  pidsLimit: integer(16, 4_194_304, 'an integer from 16 to 4194304')
    .default(4096)
    .describe("Processes and threads one sandbox may have at once (its cgroup's pids.max): bounds a fork bomb."),
  nofile: integer(64, 1_048_576, 'an integer from 64 to 1048576')
    .default(20_000)
    .describe("Open files per process in a sandbox (RLIMIT_NOFILE), never above the host's own hard limit."),
  consoleLogBytes: integer(4096, 1_073_741_824, 'a size in bytes, an integer from 4096 to 1073741824')
    .default(1_048_576)
    .describe("Cap of each sandbox's console log on the host; past it the log keeps its last quarter."),
  memoryOvercommit: fraction(0.1, 100, 'a number from 0.1 to 100')
    .default(2)
    .describe("The memory limits of all running sandboxes together may reach the host's memory times this."),
  cpuOvercommit: fraction(0.1, 1000, 'a number from 0.1 to 1000')
    .default(32)
    .describe("The CPU quotas of all running sandboxes together may reach the host's CPUs times this."),
  diskOvercommit: fraction(0.1, 100, 'a number from 0.1 to 100')
    .default(1)
    .describe(
      "What the data root holds may reach its size times this: the disks of all sandboxes (running, paused or stopped), build steps and volumes on it at their sizes, and everything else there (template layers, uploads, pulled images, snapshots, paused sandboxes' files) at the blocks it takes. A sandbox or volume create past it is refused (429) naming this key, a build step's disk, an upload and an image pull get at most the room left, and a build whose layer would pass it fails naming it; nothing is made. The disks are sparse, so 1 costs nothing until they are written; above 1 they could fill the data root together, which fails every sandbox, build and the platform's own files at once.",
    ),
  diskDefaultMB: integer(64, 1_048_576, 'a size in MB, an integer from 64 to 1048576')
    .default(1024)
    .describe(
      "Disk of a sandbox whose template asks for none (E2B's `diskSizeMB`): writes past it get ENOSPC inside the sandbox, and `df /` shows it.",
    ),
  diskMaxMB: integer(64, 1_048_576, 'a size in MB, an integer from 64 to 1048576')
    .default(10_240)
    .describe(
      'The most disk a template may ask for (`Template.build(..., {minFreeDiskMb})`); a build asking for more is refused naming this key.',
    ),
  templateMaxMemoryMB: integer(128, 65536, 'memory in MB, an integer from 128 to 65536')
    .default(65536)
    .describe('The most memory a template may ask for (`memoryMB`); a build asking for more is refused naming this key.'),
  templateMaxCpuCount: integer(1, 64, 'an integer from 1 to 64')
    .default(64)
    .describe('The most CPUs a template may ask for (`cpuCount`); a build asking for more is refused naming this key.'),
  pausedToDiskAfterMinutes: integer(1, 43_200, 'minutes, an integer from 1 to 43200')
    .default(10)
    .describe(
      'A sandbox paused in memory (`pause()`) is moved to disk after this long: its processes end, its memory and CPU are freed, its files kept; the next resume starts it from them.',
    ),
  pausedRetentionDays: integer(1, 3650, 'days, an integer from 1 to 3650')
    .default(30)
    .describe('A paused sandbox (in memory or on disk) is killed once it has been paused this long (E2B keeps them 30 days).'),
  volumeMaxMB: integer(64, 1_048_576, 'a size in MB, an integer from 64 to 1048576')
    .default(10_240)
    .describe(
      "What one volume may hold: its disk's size on one host (writes past it get ENOSPC in the sandboxes), and the file API's limit everywhere (413).",
    ),
};

export const limits = z
  .strictObject(limitFields)
  .superRefine((l, ctx) => {
    if (l.diskDefaultMB > l.diskMaxMB)
      ctx.addIssue({
        code: 'custom',
        path: ['diskDefaultMB'],
        input: l.diskDefaultMB,
        message: `expected at most limits.diskMaxMB (${l.diskMaxMB}): the default disk must be one a template may ask for`,
      });
  })
  .prefault({});

export type SandboxLimits = z.output<typeof limits>;

/** The `sandbox-kit platform` flag of each key: the sandbox host's unit passes the stack's values with them. */
export const LIMIT_FLAGS: Readonly<Record<keyof SandboxLimits, string>> = {
  pidsLimit: 'pids-limit',
  nofile: 'nofile',
  consoleLogBytes: 'console-log-bytes',
  memoryOvercommit: 'memory-overcommit',
  cpuOvercommit: 'cpu-overcommit',
  diskOvercommit: 'disk-overcommit',
  diskDefaultMB: 'disk-default-mb',
  diskMaxMB: 'disk-max-mb',
  templateMaxMemoryMB: 'template-max-memory-mb',
  templateMaxCpuCount: 'template-max-cpus',
  pausedToDiskAfterMinutes: 'paused-to-disk-after-minutes',
  pausedRetentionDays: 'paused-retention-days',
  volumeMaxMB: 'volume-max-mb',
};

/** Every limit as flags (`--pids-limit 4096 ...`), in the order of LIMIT_FLAGS. */
export function limitFlags(values: SandboxLimits): string[] {
  return (Object.keys(LIMIT_FLAGS) as Array<keyof SandboxLimits>).flatMap((key) => [`--${LIMIT_FLAGS[key]}`, String(values[key])]);
}
