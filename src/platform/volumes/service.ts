/**
 * Volumes: a directory per volume under the platform's volumes dir (on one host its data root; in a fleet a shared
 * file system every host mounts at the same path), bound read-write into every sandbox that mounts it, by any
 * number of sandboxes at once. Owned right inside the sandboxes' user namespace: the root directory is root's
 * there (host id = the mapping's base) and open to every user (0777), so the default user writes it too. Each
 * belongs to its team; another team's volume is as unknown as a missing one.
 *
 * With `disks` (one host) each volume is a disk of its own, the sandboxes' kind (runtime/sandbox-disk.ts): a sparse
 * ext4 image of the volume's size beside its directory, loop-mounted on it, so a sandbox writing past the size gets
 * ENOSPC and the host gives the volume at most that; the file API works on the same mount. Mounted when first used
 * after a start (a host reboot unmounts it), unmounted at the platform's shutdown. Without (a fleet's shared file
 * system, which several hosts mount at once and an ext4 image must not be), only the file API is bounded.
 *
 * What a volume holds counts against its team's stored bytes as measured, writes from sandboxes included: with
 * disks its disk's used blocks (one statfs, so cheap enough for every request), measured for the team's mounted
 * volumes before a sandbox create that mounts one, a volume create, a file API write and the team's reported usage,
 * every minute, and at the shutdown's unmount. A team found over its quota gets 429 for those until it frees room.
 * Without disks a measurement walks the files (du on the shared file system): only the periodic one does, for the
 * volumes this host's running sandboxes mount; a volume found over its size is not mounted by new sandboxes.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { accessTokenMatches, hashAccessToken } from '../../contract/access-token';
import { AdmissionError, type DiskAdmission } from '../../runtime/admission';
import { DEFAULT_USER } from '../../runtime/base-images';
import { DEFAULT_ID_MAPPING, type IdMapping } from '../../runtime/id-shift';
import {
  DISK_MB_RANGE,
  hasSandboxDisk,
  isMountPoint,
  makeSandboxDisk,
  MIB,
  mountSandboxDisk,
  releaseDataDir,
  removeSandboxDisk,
  shareDataDir,
  unmountSandboxDisk,
} from '../../runtime/sandbox-disk';
import { allocatedBytes } from '../../util/disk-usage';
import { ApiError } from '../http/types';
import { newAccessToken, newSandboxID } from '../sandboxes/ids';
import type { SandboxRecord } from '../sandboxes/record';
import type { VolumeMount, VolumeResolver } from '../sandboxes/volume-mounts';
import { type Caller, mayAct } from '../teams/model';
import type { QuotaLedger } from '../teams/quotas';
import { AnchoredTree } from './anchored-fs';
import type { VolumeRecord, VolumeStore } from './store';

/** What one volume may hold unless the platform is told otherwise: 10 GiB. */
export const DEFAULT_VOLUME_MAX_BYTES = 10 * 1024 ** 3;

/** The smallest size limit a volume with a disk of its own can have: the smallest disk (sandbox-disk.ts). */
export const DISK_MIN_BYTES = DISK_MB_RANGE.min * MIB;

/** Ids the sandboxes see for a host id outside their range (the kernel's overflow id). */
const OVERFLOW_ID = 65_534;

export interface VolumeServiceOptions {
  store: VolumeStore;
  /** Every sandbox record (a mounted volume is not destroyed). */
  sandboxes: () => Promise<SandboxRecord[]>;
  /** Parent of the volumes' directories. */
  dir: string;
  /** The sandboxes' user namespace range (the runtime's). */
  idMapping?: IdMapping;
  /** Per volume: a write through the file API that would take it over this is refused (413). */
  maxBytes?: number;
  /** Each volume a disk of maxBytes (rounded up to a MiB), so writes from sandboxes are bounded too; see above. */
  disks?: boolean;
  /** A volume's size (as last measured) is held of its team's stored bytes. */
  ledger?: QuotaLedger;
  /** With disks: a volume's disk is admitted as a sandbox's is (the data root's size × limits.diskOvercommit). */
  admission?: DiskAdmission;
  now?: () => number;
}

/** How often the volumes in use are measured (see above). */
export const MEASURE_EVERY_MS = 60_000;

export function volumeNotFound(ref: string): ApiError {
  return new ApiError(404, `volume ${JSON.stringify(ref)} not found`);
}

/** The 429 of a team whose stored bytes, as measured, are above its quota. */
export function storedBytesOver(limit: number, used: number): ApiError {
  return new ApiError(
    429,
    `quota exceeded: stored bytes (templateBytes) is ${limit} for this team, which holds ${used} now (templates, snapshots, and its volumes as their disks hold them, writes from sandboxes included): remove files or delete a volume or snapshot first; nothing was made`,
  );
}

export class VolumeService implements VolumeResolver {
  readonly mapping: IdMapping;
  readonly maxBytes: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private measuring: Promise<void> | undefined;

  constructor(private readonly o: VolumeServiceOptions) {
    this.mapping = o.idMapping ?? DEFAULT_ID_MAPPING;
    this.maxBytes = o.maxBytes ?? DEFAULT_VOLUME_MAX_BYTES;
    this.now = o.now ?? Date.now;
    if (o.disks && this.maxBytes < DISK_MIN_BYTES)
      throw new Error(
        `the volume size limit is ${this.maxBytes} bytes: with a disk per volume it must be at least ${DISK_MIN_BYTES} (64 MiB)`,
      );
  }

  dirOf(volumeID: string): string {
    return join(this.o.dir, volumeID);
  }

  /** The volumes dir as a shared mount point: mounts below it then leave the runtime's namespaces with the host's. */
  private share(): Promise<void> {
    return shareDataDir(this.o.dir);
  }

  /** The volume's disk mounted on its directory (after a start it may not be yet); nothing without disks. */
  private async mounted(volumeID: string): Promise<void> {
    const dir = this.dirOf(volumeID);
    if (!this.o.disks || !hasSandboxDisk(dir) || isMountPoint(dir)) return;
    await this.share();
    await mountSandboxDisk(dir, 0o777);
  }

  async create(name: string, teamID: string): Promise<VolumeRecord> {
    await this.checkStorage(teamID);
    const release = this.admitDisk();
    try {
      return await this.make(name, teamID);
    } finally {
      release();
    }
  }

  /** The new volume's disk reserved on the data root, or 429 naming limits.diskOvercommit (nothing made). */
  private admitDisk(): () => void {
    if (!this.o.disks || !this.o.admission) return () => undefined;
    try {
      return this.o.admission.reserve(Math.ceil(this.maxBytes / MIB), 'this volume');
    } catch (err) {
      if (err instanceof AdmissionError) throw new ApiError(429, `cannot create the volume: ${err.message}; nothing was made`);
      throw err;
    }
  }

  private async make(name: string, teamID: string): Promise<VolumeRecord> {
    const volumeID = newSandboxID();
    const record: VolumeRecord = { volumeID, name, teamID, createdAt: new Date(this.now()).toISOString(), token: newAccessToken() };
    fs.mkdirSync(this.o.dir, { recursive: true, mode: 0o700 });
    const dir = this.dirOf(volumeID);
    try {
      if (this.o.disks) {
        await this.share();
        await makeSandboxDisk(dir, Math.ceil(this.maxBytes / MIB), 0o777);
        // mke2fs's lost+found is not the volume's: a volume starts empty.
        fs.rmdirSync(join(dir, 'lost+found'));
      } else {
        fs.mkdirSync(dir);
        fs.chmodSync(dir, 0o777);
      }
      fs.chownSync(dir, this.mapping.base, this.mapping.base);
    } catch (err) {
      await this.remove(volumeID);
      throw err;
    }
    if (!(await this.o.store.add(record))) {
      await this.remove(volumeID);
      throw new ApiError(409, `this team has a volume named ${JSON.stringify(name)} already: choose another name`);
    }
    return record;
  }

  /** The volume's disk and directory; idempotent. */
  private async remove(volumeID: string): Promise<void> {
    const dir = this.dirOf(volumeID);
    await removeSandboxDisk(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }

  /** The shutdown: every volume's disk unmounted (no sandbox is left to use one), the volumes dir's own mount too. */
  async unmountAll(): Promise<void> {
    await this.stop();
    if (!this.o.disks || !fs.existsSync(this.o.dir)) return;
    for (const entry of fs.readdirSync(this.o.dir)) {
      const dir = this.dirOf(entry);
      if (!hasSandboxDisk(dir)) continue;
      // Its last measurement: unmounted, nothing writes it until it is mounted again.
      const record = isMountPoint(dir) ? await this.o.store.get(entry) : undefined;
      if (record && !record.destroying) await this.measure(record).catch(() => undefined);
      await unmountSandboxDisk(dir);
    }
    await releaseDataDir(this.o.dir);
  }

  async list(caller: Caller): Promise<VolumeRecord[]> {
    return (await this.o.store.all())
      .filter((r) => mayAct(caller, r.teamID) && !r.destroying)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.volumeID.localeCompare(b.volumeID));
  }

  async get(volumeID: string, caller: Caller): Promise<VolumeRecord> {
    const record = await this.o.store.get(volumeID);
    if (!record || record.destroying || !mayAct(caller, record.teamID)) throw volumeNotFound(volumeID);
    return record;
  }

  private async mountedBy(volumeID: string): Promise<string[]> {
    return (await this.o.sandboxes())
      .filter((s) => s.volumeMounts?.some((m) => m.volumeID === volumeID))
      .map((s) => s.sandboxID)
      .sort();
  }

  /** false when the caller has no such volume; 409, with nothing removed, while a sandbox (running or paused) mounts it. */
  async destroy(volumeID: string, caller: Caller): Promise<boolean> {
    const record = await this.o.store.get(volumeID);
    if (!record || record.destroying || !mayAct(caller, record.teamID)) return false;
    // Marked first, so no create mounts it between the check and the removal.
    await this.o.store.put({ ...record, destroying: true });
    const users = await this.mountedBy(volumeID);
    if (users.length > 0) {
      await this.o.store.put(record);
      throw new ApiError(
        409,
        `volume ${JSON.stringify(record.name)} is mounted by sandbox(es) ${users.join(', ')}: kill them first (nothing was removed)`,
      );
    }
    await this.remove(volumeID);
    await this.o.store.delete(record);
    await this.o.ledger?.release(record.teamID, `bytes:volume:${volumeID}`);
    return true;
  }

  /** The team's volumes by name, for a create (VolumeResolver). */
  async resolve(mounts: Array<{ name: string; path: string }>, teamID: string): Promise<VolumeMount[]> {
    const out: VolumeMount[] = [];
    for (const m of mounts) {
      const record = await this.o.store.byName(teamID, m.name);
      if (!record || record.destroying)
        throw new ApiError(404, `volumeMounts: volume ${JSON.stringify(m.name)} not found in this team; create it first`);
      const source = this.dirOf(record.volumeID);
      if (!this.o.disks && (record.heldBytes ?? 0) > this.maxBytes)
        throw new ApiError(
          507,
          `volumeMounts: volume ${JSON.stringify(m.name)} holds ${record.heldBytes} bytes, over its limit of ${this.maxBytes} (as last measured): remove files through the file API first`,
        );
      await this.mounted(record.volumeID);
      if (!fs.statSync(source, { throwIfNoEntry: false })?.isDirectory())
        throw new ApiError(500, `volume ${JSON.stringify(m.name)} has no directory at ${source} (is the volumes file system mounted?)`);
      out.push({ name: m.name, path: m.path, volumeID: record.volumeID, source });
    }
    // Mounted, the sandbox could write the team past its stored bytes: not while it is there already.
    await this.checkStorage(teamID);
    return out;
  }

  /** Kept mounts' volumes, their disks mounted again where a restart unmounted them (VolumeResolver). */
  async ready(mounts: VolumeMount[]): Promise<void> {
    for (const m of mounts) await this.mounted(m.volumeID);
  }

  /** The volume a file API call names, when its token is the volume's: 404 unknown, 401 wrong or missing token. */
  async forToken(volumeID: string, bearer: string | undefined): Promise<{ record: VolumeRecord; tree: AnchoredTree }> {
    const record = await this.o.store.get(volumeID);
    if (!record || record.destroying) throw volumeNotFound(volumeID);
    if (!accessTokenMatches(bearer, hashAccessToken(record.token)))
      throw new ApiError(401, "send the volume's token (Volume.create or Volume.connect hand it out) as Authorization: Bearer <token>");
    await this.mounted(volumeID);
    return { record, tree: new AnchoredTree(this.dirOf(volumeID)) };
  }

  /**
   * Bytes a write may still add before the volume's disk is full for the sandboxes: the file API runs as the host's
   * root, which could take the disk's root reserve too. Without disks: no bound of its own (maxBytes holds).
   */
  room(volumeID: string): number {
    if (!this.o.disks) return Number.POSITIVE_INFINITY;
    const s = fs.statfsSync(this.dirOf(volumeID));
    return s.bavail * s.bsize;
  }

  /**
   * Bytes the volume takes now. With disks: its disk's used blocks (statfs; delayed allocations count, so no sync is
   * needed), which are what its files take plus one block of the file system's own. Without: its files' (du).
   */
  async usage(volumeID: string): Promise<number> {
    const dir = this.dirOf(volumeID);
    if (!this.o.disks) return allocatedBytes(dir);
    // Unmounted, statfs would tell the volumes dir's file system.
    if (!isMountPoint(dir)) throw new Error(`volume ${volumeID}: its disk is not mounted, so it cannot be measured`);
    const s = fs.statfsSync(dir);
    return (s.blocks - s.bfree) * s.bsize;
  }

  /** Measures the volume and holds that of its team's stored bytes, whatever the quota (see setHold). Returns the bytes. */
  async measure(record: VolumeRecord): Promise<number> {
    const bytes = await this.usage(record.volumeID);
    await this.hold(record, bytes);
    return bytes;
  }

  private async hold(record: VolumeRecord, bytes: number): Promise<void> {
    await this.o.ledger?.setHold(record.teamID, `bytes:volume:${record.volumeID}`, { templateBytes: bytes });
    const now = await this.o.store.get(record.volumeID);
    if (now && !now.destroying && now.heldBytes !== bytes) await this.o.store.put({ ...now, heldBytes: bytes });
  }

  /** With disks: the team's volumes whose disk is mounted (only those can have changed since), measured now. */
  async measureTeam(teamID: string): Promise<void> {
    if (!this.o.disks || !this.o.ledger) return;
    for (const record of await this.o.store.all())
      if (record.teamID === teamID && !record.destroying && isMountPoint(this.dirOf(record.volumeID))) await this.measure(record);
  }

  /** 429 when the team's stored bytes, its mounted volumes measured now, are above its quota. */
  async checkStorage(teamID: string): Promise<void> {
    const ledger = this.o.ledger;
    if (!ledger) return;
    await this.measureTeam(teamID);
    const over = await ledger.overQuota(teamID, 'templateBytes');
    if (over) throw storedBytesOver(over.limit, over.used);
  }

  /**
   * Every volume in use measured: with disks each mounted one; without, those this host's running sandboxes mount
   * (du on the shared file system, one at a time). One pass at a time; a volume that fails is tried next time.
   */
  measureInUse(): Promise<void> {
    this.measuring ??= (async () => {
      const inUse = this.o.disks
        ? undefined
        : new Set(
            (await this.o.sandboxes()).filter((s) => s.state === 'running').flatMap((s) => (s.volumeMounts ?? []).map((m) => m.volumeID)),
          );
      for (const record of await this.o.store.all()) {
        if (record.destroying) continue;
        const used = inUse ? inUse.has(record.volumeID) : isMountPoint(this.dirOf(record.volumeID));
        if (used) await this.measure(record).catch(() => undefined);
      }
    })().finally(() => {
      this.measuring = undefined;
    });
    return this.measuring;
  }

  /** Measures the volumes in use every `everyMs` until stop(). */
  start(everyMs = MEASURE_EVERY_MS): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => void this.measureInUse(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.measuring;
  }

  /**
   * Holds `bytes` of the team's stored bytes for the volume (instead of what it held). With `ask` (a write adding to
   * it): 429 when that takes the team over its quota, the hold kept as measured before. Without (a removal): as is.
   */
  async account(record: VolumeRecord, bytes: number, ask = true): Promise<void> {
    const ledger = this.o.ledger;
    if (!ledger) return;
    if (!ask) return this.hold(record, bytes);
    const hold = `bytes:volume:${record.volumeID}` as const;
    const before = (await this.o.store.get(record.volumeID))?.heldBytes ?? 0;
    await ledger.release(record.teamID, hold);
    try {
      await ledger.reserve(record.teamID, hold, { templateBytes: bytes });
    } catch (err) {
      await ledger.setHold(record.teamID, hold, { templateBytes: before });
      throw err;
    }
    await this.hold(record, bytes);
  }

  /** An id inside the sandboxes (0..size-1) as the host's; 400 outside the range. */
  hostId(inside: number | undefined, what: 'uid' | 'gid'): number | undefined {
    if (inside === undefined) return undefined;
    if (!(Number.isInteger(inside) && inside >= 0 && inside < this.mapping.size))
      throw new ApiError(400, `${what}: expected a whole number from 0 to ${this.mapping.size - 1} (an id inside the sandboxes)`);
    return this.mapping.base + inside;
  }

  /** A host id as the sandboxes see it. */
  insideId(host: number): number {
    const inside = host - this.mapping.base;
    return inside >= 0 && inside < this.mapping.size ? inside : OVERFLOW_ID;
  }

  /** The owner a file API write gives when the call names none: the sandboxes' default user. */
  get defaultOwner(): number {
    return this.mapping.base + DEFAULT_USER.uid;
  }
}
