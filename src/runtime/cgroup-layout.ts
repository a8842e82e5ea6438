/**
 * The host's cgroup layout and what it means for the OCI runtime. crun decides its mode from statfs: /sys/fs/cgroup
 * being cgroup2 is "unified"; tmpfs with a cgroup2 `unified` beneath is "hybrid", which crun refuses as soon as that
 * cgroup2 hierarchy has any controller; anything else is "legacy" (v1). runc handles all three. Hiding `unified`
 * (a tiny tmpfs over it, in a private mount namespace of the runtime call only) turns hybrid into legacy for crun.
 */
import * as fs from 'node:fs';
import type { RuntimeChoice, RuntimeName } from './types';

export const CGROUP_ROOT = '/sys/fs/cgroup';
export const CGROUP_UNIFIED = `${CGROUP_ROOT}/unified`;

export type CgroupLayout = 'unified' | 'hybrid' | 'legacy';

/** What the layout is decided from (gathered by readCgroupFacts, or captured from another host for tests). */
export interface CgroupFacts {
  /** File system type of /sys/fs/cgroup: 'cgroup2', 'tmpfs' or something else. */
  rootType: string;
  /** File system type of /sys/fs/cgroup/unified, when it exists. */
  unifiedType?: string;
  /** Contents of /sys/fs/cgroup/unified/cgroup.controllers, split. */
  unifiedControllers: string[];
}

export interface CgroupLayoutInfo {
  layout: CgroupLayout;
  /** Hybrid with controllers in the cgroup2 part: crun refuses it unless `unified` is hidden. */
  crunNeedsHiding: boolean;
}

export function classifyCgroupLayout(facts: CgroupFacts): CgroupLayoutInfo {
  if (facts.rootType === 'cgroup2') return { layout: 'unified', crunNeedsHiding: false };
  if (facts.rootType === 'tmpfs' && facts.unifiedType === 'cgroup2') {
    return { layout: 'hybrid', crunNeedsHiding: facts.unifiedControllers.length > 0 };
  }
  return { layout: 'legacy', crunNeedsHiding: false };
}

/** One cgroup hierarchy as /proc/self/mountinfo shows it. */
export interface CgroupMount {
  mountPoint: string;
  type: 'cgroup' | 'cgroup2';
  /** v1: the controllers (and name=...) from the super options; v2: empty. */
  controllers: string[];
}

function unescapeMountinfo(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * Every mount of /proc/self/mountinfo: mount point, file system type, super options, and the optional fields (its
 * propagation: `shared:N`, `master:N`; none for a private mount).
 */
export function parseMountinfo(
  text: string,
): Array<{ mountPoint: string; type: string; source: string; superOptions: string[]; optional: string[] }> {
  const mounts = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const [type, source, superOpts] = right.split(' ');
    mounts.push({
      mountPoint: unescapeMountinfo(fields[4] ?? ''),
      type: type ?? '',
      source: source ?? '',
      superOptions: (superOpts ?? '').split(','),
      optional: fields.slice(6).filter((f) => f !== ''),
    });
  }
  return mounts;
}

export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const result: CgroupMount[] = [];
  for (const m of parseMountinfo(mountinfo)) {
    if (m.type === 'cgroup2') result.push({ mountPoint: m.mountPoint, type: 'cgroup2', controllers: [] });
    if (m.type === 'cgroup') {
      const controllers = m.superOptions.filter(
        (o) => o !== 'rw' && o !== 'ro' && !o.startsWith('release_agent=') && o !== 'clone_children' && o !== 'noprefix' && o !== 'xattr',
      );
      result.push({ mountPoint: m.mountPoint, type: 'cgroup', controllers });
    }
  }
  return result;
}

/** The same facts from mountinfo alone (the file system types of /sys/fs/cgroup and its `unified`). */
export function cgroupFactsFromMountinfo(mountinfo: string, unifiedControllers: string[]): CgroupFacts {
  const mounts = parseMountinfo(mountinfo);
  // The last mount at a path is the one visible there.
  const at = (p: string) => [...mounts].reverse().find((m) => m.mountPoint === p)?.type;
  const unifiedType = at(CGROUP_UNIFIED);
  return { rootType: at(CGROUP_ROOT) ?? 'none', ...(unifiedType ? { unifiedType } : {}), unifiedControllers };
}

const CGROUP2_SUPER_MAGIC = 0x63677270;
const TMPFS_MAGIC = 0x01021994;

function fsTypeOf(p: string): string | undefined {
  try {
    const type = Number(fs.statfsSync(p).type);
    if (type === CGROUP2_SUPER_MAGIC) return 'cgroup2';
    if (type === TMPFS_MAGIC) return 'tmpfs';
    return `0x${type.toString(16)}`;
  } catch {
    return undefined;
  }
}

/** This host's facts, by statfs, the same way crun decides. */
export function readCgroupFacts(): CgroupFacts {
  const unifiedType = fsTypeOf(CGROUP_UNIFIED);
  let unifiedControllers: string[] = [];
  if (unifiedType === 'cgroup2') {
    try {
      unifiedControllers = fs.readFileSync(`${CGROUP_UNIFIED}/cgroup.controllers`, 'utf8').split(/\s+/).filter(Boolean);
    } catch {
      unifiedControllers = [];
    }
  }
  return { rootType: fsTypeOf(CGROUP_ROOT) ?? 'none', ...(unifiedType ? { unifiedType } : {}), unifiedControllers };
}

export interface RuntimeSelection {
  name: RuntimeName;
  /** Run crun in a private mount namespace with `unified` hidden. */
  hideUnified: boolean;
}

/**
 * `crun` and `runc` are taken as asked (crun gets `unified` hidden where it needs it); `auto` takes crun (the
 * faster of the two, measured) when it is installed, hiding `unified` on hybrid hosts, and runc otherwise. runsc
 * (gVisor) is taken only when asked for.
 */
export function selectRuntime(
  choice: RuntimeChoice,
  layout: CgroupLayoutInfo,
  installed: { crun: boolean; runc: boolean },
): RuntimeSelection {
  const name = choice === 'auto' ? (installed.crun || !installed.runc ? 'crun' : 'runc') : choice;
  return { name, hideUnified: name === 'crun' && layout.crunNeedsHiding };
}
