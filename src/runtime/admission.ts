/**
 * Admission: a sandbox is created only when its memory, CPUs and disk fit what the host can give: never more than the
 * whole host (or data root) for one sandbox, and all together at most the host × an overcommit. Memory counts every
 * running sandbox's limit; CPUs count their quotas. Disk counts what takes the data root's file system
 * (committedDiskMB): every disk image on it (running, paused and stopped sandboxes', build steps', volumes') at its
 * size, sparse or not, since each may be written up to it, and everything else there (template layers and their
 * shifted copies, build uploads, pulled images, snapshots, paused sandboxes' files, the platform's own) by the blocks
 * it takes, as the file system reports them; plus what is reserved for disks, layers and uploads being made. Volumes and
 * template build steps go through the same disk check (DiskAdmission). Pure except `hostCapacity`, `committedDiskMB`
 * and DiskAdmission.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileSystemMB, MIB } from './sandbox-disk';

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

/**
 * Why `request` cannot be admitted beside `committed` on `host`, or undefined when it can; `what` names the request
 * in the message (a sandbox, a volume, a build step's layer).
 */
export function admissionProblem(
  request: Resources,
  committed: Resources,
  host: Resources,
  limits: AdmissionLimits,
  what = 'this sandbox',
): string | undefined {
  const problems: string[] = [];
  // One sandbox never gets more than the whole host, whatever the overcommit.
  if (request.memoryMB > host.memoryMB) problems.push(`memory: ${request.memoryMB} MB asked, the host has ${host.memoryMB} MB`);
  if (request.cpuCount > host.cpuCount) problems.push(`CPUs: ${request.cpuCount} asked, the host has ${host.cpuCount}`);
  const disk = request.diskMB !== undefined && host.diskMB !== undefined ? { asked: request.diskMB, root: host.diskMB } : undefined;
  if (disk && disk.asked > disk.root) problems.push(`disk: ${disk.asked} MB asked, the data root has ${disk.root} MB`);
  if (problems.length > 0) return `the host cannot take ${what}: ${problems.join('; ')}`;
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
  return problems.length > 0 ? `the host cannot take ${what} now: ${problems.join('; ')}` : undefined;
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

/** MB reserved, per file system (its device number), for disks, layers and uploads being made in this process. */
const reserved = new Map<number, number>();

/**
 * Holds `mb` on the file system of `root` until the returned release (idempotent): committedDiskMB counts it, so a
 * check made meanwhile (a sandbox create, DiskAdmission) sees it. The caller checks first; the holder releases once
 * its bytes are on the file system (where they count by themselves) or it gave up.
 */
export function reserveDiskMB(root: string, mb: number): () => void {
  const dev = fs.statSync(existing(root)).dev;
  reserved.set(dev, (reserved.get(dev) ?? 0) + mb);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const left = (reserved.get(dev) ?? 0) - mb;
    if (left > 0) reserved.set(dev, left);
    else reserved.delete(dev);
  };
}

/**
 * What the file system holding `root` has committed, in MB: its used blocks (every file there, by the blocks it takes,
 * hard links once), with each disk image (`*.disk`) directly in `imageDirs` on that file system counted at its size
 * instead of the blocks it holds, except those in `asWritten` (a build step's disk, which goes once its layer is
 * copied out), plus what is reserved there. `root` may not exist yet: its nearest parent's file system then.
 */
export function committedDiskMB(root: string, imageDirs: readonly string[], asWritten: readonly string[] = []): number {
  const at = fs.statSync(existing(root));
  const st = fs.statfsSync(existing(root));
  let bytes = (st.blocks - st.bfree) * st.bsize;
  const written = new Set(asWritten.map((p) => path.resolve(p)));
  for (const dir of imageDirs) {
    for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const file = path.resolve(dir, name);
      if (!name.endsWith('.disk') || written.has(file)) continue;
      const image = fs.statSync(file, { throwIfNoEntry: false });
      if (image?.isFile() && image.dev === at.dev) bytes += Math.max(0, image.size - image.blocks * 512);
    }
  }
  return Math.ceil(bytes / MIB) + (reserved.get(at.dev) ?? 0);
}

/** `dir`, or its nearest existing parent: on the file system `dir` will be on. */
function existing(dir: string): string {
  let at = path.resolve(dir);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  return at;
}

/**
 * The disk check of what is not a sandbox: a volume's disk, a build step's disk and the layer it leaves. The data
 * root's committed space (committedDiskMB: the sandboxes' disks, layers, uploads, pulls, snapshots, other volumes)
 * plus the request must stay within the data root's size × diskOvercommit, the sandboxes' own check. A request
 * admitted is reserved until its bytes are on the file system (the caller's release), so two at once cannot both take
 * the last room; a sandbox create holds its disk the same way (reserveDiskMB) from its check until its image is made.
 */
export class DiskAdmission {
  constructor(
    private readonly o: {
      /** The data root: its file system is what is admitted. */
      root: string;
      /** Where disk images lie (the sandboxes', the build steps', the volumes'): counted at their size. */
      imageDirs: readonly string[];
      overcommit: number;
    },
  ) {}

  /** MB the data root may still take: its size × diskOvercommit less what is committed (`asWritten`: see committedDiskMB). */
  roomMB(asWritten: readonly string[] = []): number {
    return Math.floor(fileSystemMB(this.o.root) * this.o.overcommit) - committedDiskMB(this.o.root, this.o.imageDirs, asWritten);
  }

  /**
   * Reserves `askedMB` for `what` (named in the error: 'this volume'), or throws AdmissionError naming
   * limits.diskOvercommit. The returned release gives the reservation back (idempotent).
   */
  reserve(askedMB: number, what: string, asWritten: readonly string[] = []): () => void {
    const root = fileSystemMB(this.o.root);
    const none = { memoryMB: 0, cpuCount: 0 };
    const problem = admissionProblem(
      { ...none, diskMB: askedMB },
      { ...none, diskMB: committedDiskMB(this.o.root, this.o.imageDirs, asWritten) },
      { ...none, diskMB: root },
      { ...DEFAULT_ADMISSION, diskOvercommit: this.o.overcommit },
      what,
    );
    if (problem) throw new AdmissionError(problem);
    return reserveDiskMB(this.o.root, askedMB);
  }

  /**
   * Runs `work` holding `askedMB` for `what` (refused as reserve refuses), and ends it once what it writes takes the
   * data root past its room: every `everyMs` the room is read with this hold taken out (what `work` wrote counts there
   * by itself), and below zero the signal handed to `work` is aborted with an AdmissionError naming
   * limits.diskOvercommit, which is what this then rejects with (`work` removes what it made). The hold is given back
   * when `work` settles. For what cannot say its size before it has written it (an image's unpacked layers).
   */
  async guard<T>(askedMB: number, what: string, work: (signal: AbortSignal) => Promise<T>, everyMs = 250): Promise<T> {
    const release = this.reserve(askedMB, what);
    const stop = new AbortController();
    const timer = setInterval(() => {
      const root = fileSystemMB(this.o.root);
      const limit = Math.floor(root * this.o.overcommit);
      const committed = committedDiskMB(this.o.root, this.o.imageDirs) - askedMB;
      if (committed <= limit) return;
      stop.abort(
        new AdmissionError(
          `the host cannot take ${what} now: disk: it took the data root to ${committed} MB of ${limit} MB committed (data root ${root} MB × diskOvercommit ${this.o.overcommit})`,
        ),
      );
    }, everyMs);
    try {
      return await work(stop.signal);
    } catch (err) {
      throw stop.signal.aborted ? (stop.signal.reason as Error) : err;
    } finally {
      clearInterval(timer);
      release();
    }
  }
}
