/**
 * A create's `volumeMounts` (E2B's SandboxVolumeMount: a volume by name, and where it appears in the sandbox), as
 * the sandbox API checks them and what it needs from the volumes room (VolumeResolver), so sandboxes never import
 * that room. The rule for a mount path is said once, here: it is both the check and the error message.
 */
import { posix } from 'node:path';
import { z } from 'zod';

/** At most this many volumes in one sandbox. */
export const MAX_VOLUME_MOUNTS = 10;

/**
 * Paths of the sandbox's own system: a volume may not be mounted at one, inside one, or above one (it would hide
 * it). `/opt/sandbox-kit` holds the agent the sandbox runs.
 */
export const RESERVED_MOUNT_PATHS = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/opt/sandbox-kit',
  '/proc',
  '/run',
  '/sbin',
  '/sys',
  '/usr',
  '/var/run',
] as const;

const within = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** Why `path` cannot be a mount path, or undefined when it can. */
export function mountPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return `${JSON.stringify(path)} is not an absolute path; expected e.g. "/data"`;
  if (path.length > 1024 || path.includes('\0')) return 'expected a path of at most 1024 characters and no NUL';
  const normal = posix.normalize(path).replace(/\/+$/, '');
  if (normal !== path || path.split('/').some((c) => c === '.' || c === '..'))
    return `${JSON.stringify(path)} is not in canonical form (no ".", "..", "//" or trailing "/"); expected e.g. ${JSON.stringify(normal || '/data')}`;
  if (path === '/') return '"/" is the sandbox\'s root: mount a volume at a directory below it, e.g. "/data"';
  const system = RESERVED_MOUNT_PATHS.find((r) => within(path, r) || within(r, path));
  if (system !== undefined)
    return `${JSON.stringify(path)} collides with the system path ${system} (a volume may not be mounted at, inside or above ${RESERVED_MOUNT_PATHS.join(', ')})`;
  return undefined;
}

const mountPath = z.string({ message: 'expected an absolute path (a string), e.g. "/data"' }).superRefine((path, ctx) => {
  const problem = mountPathProblem(path);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

export const volumeMountsSchema = z
  .array(
    z.object(
      {
        name: z
          .string({ message: 'expected the name of a volume of this team' })
          .min(1, { message: 'expected the name of a volume of this team' }),
        path: mountPath,
      },
      { message: 'expected {"name": <volume name>, "path": <absolute path>}' },
    ),
    { message: 'expected a list of {"name", "path"}' },
  )
  .max(MAX_VOLUME_MOUNTS, { message: `at most ${MAX_VOLUME_MOUNTS} volumes per sandbox` })
  .superRefine((mounts, ctx) => {
    const paths = mounts.map((m) => m.path);
    const twice = paths.find((p, i) => paths.indexOf(p) !== i);
    if (twice !== undefined)
      ctx.addIssue({ code: 'custom', message: `two volumes at ${JSON.stringify(twice)}: one path takes one volume` });
  });

/** A mount as a sandbox keeps it: the volume's name (as asked for) and ID, where it appears, its host directory. */
export interface VolumeMount {
  name: string;
  path: string;
  volumeID: string;
  /** The volume's directory on the host (bound read-write at `path`). */
  source: string;
}

export interface VolumeResolver {
  /** The team's volumes by name; 404 naming the first one the team does not have (another team's is as unknown). */
  resolve(mounts: Array<{ name: string; path: string }>, teamID: string): Promise<VolumeMount[]>;
  /** Makes kept mounts' directories ready to bind again (a sandbox started from its files after the platform restarted). */
  ready(mounts: VolumeMount[]): Promise<void>;
}
