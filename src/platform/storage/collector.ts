/**
 * The storage collector: removes from the template builder's data directory what nothing uses any more
 * (docs/templates.md#storage). Step layers, pulled image layers and COPY uploads that no kept build, running or
 * paused sandbox or snapshot references, once unchanged for `keepUnusedSeconds`; the shifted copies of removed
 * layers; image records missing a layer, and blobs no kept image record names; and scratch older than a build may
 * run (what a stopped build left).
 *
 * Races: work under way holds what it uses (util/path-holds.ts: a build its layers, uploads and the image store
 * while it pulls; a create its template's layers until its record names them). The collector starts tracking
 * holds before it reads the records, so a hold released after that read still keeps its paths, and it moves each
 * path out of the way (a rename into a trash directory on the same file system) inside the holds' exclusive
 * section, after checking it was not held. The trash is measured and removed after.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { HoldTracker, PathHolds } from '../../util/path-holds';
import { allocatedBytes } from '../../util/disk-usage';
import type { SandboxRecord } from '../sandboxes/record';
import type { SnapshotRecord } from '../snapshots/store';
import type { QuotaLedger } from '../teams/quotas';
import type { BuildRecord } from '../templates/store';
import type { TemplateStorage } from '../templates/service';
import { keptBuildIDs, liveReferences, type TemplateRefs, uploadKey } from './references';

/** What one collection removed and freed. */
export interface GcReport {
  removed: { layers: number; shiftedCopies: number; uploads: number; imageLayers: number; images: number; blobs: number; scratch: number };
  /** Bytes the removed files took on disk (`du`), in total and per kind. */
  bytesFreed: number;
  bytesFreedBy: { layers: number; uploads: number; images: number; scratch: number };
  /** Referenced or held, so kept. */
  kept: { layers: number; uploads: number; imageLayers: number };
  /** Parts left for the next run, and why (a pull under way holds the image store). */
  skipped: string[];
  seconds: number;
}

export interface CollectorOptions {
  templates: TemplateStorage;
  /** Every sandbox record, running or paused (what of them the collector reads). */
  sandboxes(): Promise<Array<Pick<SandboxRecord, 'buildID' | 'layers'>>>;
  snapshots(): Promise<Array<Pick<SnapshotRecord, 'layerDir' | 'template'>>>;
  holds: PathHolds;
  /** Each removed upload's bytes are given back to its team. */
  ledger?: QuotaLedger;
  /** Unreferenced files are removed only once unchanged this long (gc.keepUnusedSeconds). */
  keepUnusedSeconds: number;
  log?(line: string): void;
  now?(): number;
}

type Kind = keyof GcReport['bytesFreedBy'];

/** Seconds since the entry last changed (data or metadata: a rename, a chown, a touch); Infinity when it is gone. */
function ageSeconds(path: string, now: number): number {
  const st = fs.lstatSync(path, { throwIfNoEntry: false });
  return st ? (now - Math.max(st.mtimeMs, st.ctimeMs)) / 1000 : Number.POSITIVE_INFINITY;
}

async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => [] as string[]);
}

/** A shifted copy of a layer (runtime/id-shift.ts), its lock or its half-made copy: `<layer>.ids-<base>-<size>-<key>...`. */
const SHIFTED = /^(.+)\.ids-\d+-\d+-[0-9a-f]+(\.lock|\.tmp-\d+)?$/;

/** One collection: where its trash goes, and what it has moved there. */
class Sweep {
  readonly report: GcReport = {
    removed: { layers: 0, shiftedCopies: 0, uploads: 0, imageLayers: 0, images: 0, blobs: 0, scratch: 0 },
    bytesFreed: 0,
    bytesFreedBy: { layers: 0, uploads: 0, images: 0, scratch: 0 },
    kept: { layers: 0, uploads: 0, imageLayers: 0 },
    skipped: [],
    seconds: 0,
  };
  private n = 0;

  constructor(
    readonly trash: string,
    private readonly holds: PathHolds,
    readonly tracker: HoldTracker,
  ) {}

  /** Moves `path` into the trash unless it is or was held; false when it stays. */
  async move(path: string, kind: Kind): Promise<boolean> {
    return this.holds.exclusive(async () => {
      if (this.tracker.seen(path) || !fs.existsSync(path)) return false;
      const dir = join(this.trash, kind);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await rename(path, join(dir, `${this.n++}-${basename(path)}`));
      return true;
    });
  }
}

export class StorageCollector {
  private running: Promise<GcReport> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly log: (line: string) => void;

  constructor(private readonly o: CollectorOptions) {
    this.now = o.now ?? Date.now;
    this.log = o.log ?? (() => undefined);
  }

  /** Runs every `intervalSeconds` (0: never) until stop; a run's failure is logged, the next one still comes. */
  start(intervalSeconds: number): void {
    if (intervalSeconds <= 0) return;
    this.timer = setInterval(() => {
      this.collect().catch((err: Error) => this.log(`gc: ${err.message}`));
    }, intervalSeconds * 1000);
    this.timer.unref();
  }

  /** Stops the timer and waits for a run under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One collection; a call while one runs gets that run's report. */
  collect(): Promise<GcReport> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private get dirs() {
    return this.o.templates.dirs;
  }

  /** Scratch older than this belongs to no build under way (a build's deadline, and ten minutes to spare). */
  private get staleSeconds(): number {
    return this.o.templates.deadlineSeconds + 600;
  }

  private async run(): Promise<GcReport> {
    const started = this.now();
    const trashRoot = join(dirname(this.dirs.layers), '.gc-trash');
    // A collection that stopped half-way left its trash: it goes first.
    await rm(trashRoot, { recursive: true, force: true });
    const tracker = this.o.holds.track();
    const sweep = new Sweep(join(trashRoot, `${started}-${randomBytes(3).toString('hex')}`), this.o.holds, tracker);
    try {
      const { store } = this.o.templates;
      const templates: TemplateRefs[] = [];
      for (const template of await store.listTemplates()) templates.push({ template, tags: await store.tags(template.templateID) });
      const sandboxes = await this.o.sandboxes();
      const snapshots = await this.o.snapshots();
      const keptBuilds = (await Promise.all([...keptBuildIDs(templates)].map((id) => store.getBuild(id)))).filter(
        (b): b is BuildRecord => b !== undefined,
      );
      // A record older than the layers field: its build's layers, as it was made from them.
      const sandboxLayers = await Promise.all(
        sandboxes.map(async (s) => ({ layers: s.layers ?? (s.buildID ? (await store.getBuild(s.buildID))?.layers : undefined) })),
      );
      const live = liveReferences(keptBuilds, sandboxLayers, snapshots);
      const unused = (path: string) => !live.layers.has(resolve(path)) && ageSeconds(path, this.now()) >= this.o.keepUnusedSeconds;

      await this.stepLayers(sweep, unused);
      await this.uploads(sweep, live.uploads);
      await this.images(sweep, unused);
      for (const name of await entries(this.dirs.scratch)) {
        const p = join(this.dirs.scratch, name);
        if (ageSeconds(p, this.now()) >= this.staleSeconds && (await sweep.move(p, 'scratch'))) sweep.report.removed.scratch++;
      }

      const r = sweep.report;
      for (const kind of Object.keys(r.bytesFreedBy) as Kind[]) {
        const dir = join(sweep.trash, kind);
        // What the moved entries take; the trash directory itself is the collector's, not freed.
        if (fs.existsSync(dir)) r.bytesFreedBy[kind] = (await allocatedBytes(dir)) - fs.lstatSync(dir).blocks * 512;
      }
      r.bytesFreed = Object.values(r.bytesFreedBy).reduce((a, b) => a + b, 0);
    } finally {
      tracker.stop();
      await rm(trashRoot, { recursive: true, force: true });
    }
    const r = sweep.report;
    r.seconds = (this.now() - started) / 1000;
    const removed = Object.entries(r.removed)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`);
    this.log(
      `gc: removed ${removed.length > 0 ? removed.join(', ') : 'nothing'}; freed ${r.bytesFreed} bytes (${(r.bytesFreed / 1048576).toFixed(1)} MiB) in ${r.seconds.toFixed(1)} s; kept ${r.kept.layers} layers, ${r.kept.imageLayers} image layers, ${r.kept.uploads} uploads${r.skipped.length > 0 ? `; skipped: ${r.skipped.join('; ')}` : ''}`,
    );
    return r;
  }

  /** Step layers, then the shifted copies of those gone, then the layer cache entries naming a layer that is gone. */
  private async stepLayers(sweep: Sweep, unused: (p: string) => boolean): Promise<void> {
    const dir = this.dirs.layers;
    const names = await entries(dir);
    const r = sweep.report;
    for (const name of names) {
      const p = join(dir, name);
      if (SHIFTED.test(name)) continue;
      if (name.startsWith('.')) {
        // A step's overlay work dir, left by a stopped build.
        if (ageSeconds(p, this.now()) >= this.staleSeconds && (await sweep.move(p, 'scratch'))) r.removed.scratch++;
      } else if (unused(p) && (await sweep.move(p, 'layers'))) r.removed.layers++;
      else r.kept.layers++;
    }
    for (const name of names) {
      const source = SHIFTED.exec(name)?.[1];
      if (source === undefined || fs.existsSync(join(dir, source))) continue;
      if (await sweep.move(join(dir, name), 'layers')) r.removed.shiftedCopies++;
    }
    const { store } = this.o.templates;
    for (const [key, layer] of await store.layerCache()) if (!fs.existsSync(layer.dir)) await store.deleteLayer(key);
  }

  /**
   * COPY uploads no kept build copied, once unchanged for keepUnusedSeconds (an upload answered as present to the
   * SDK counts as changed then); a record whose file is gone; files no record names, once stale (a stopped upload's).
   */
  private async uploads(sweep: Sweep, live: Set<string>): Promise<void> {
    const { store } = this.o.templates;
    const r = sweep.report;
    const recorded = new Set<string>();
    for (const { teamID, hash, file } of await store.allFiles()) {
      recorded.add(resolve(file.path));
      const gone = !fs.existsSync(file.path);
      if (!gone && (live.has(uploadKey(teamID, hash)) || ageSeconds(file.path, this.now()) < this.o.keepUnusedSeconds)) {
        r.kept.uploads++;
        continue;
      }
      if (!gone && !(await sweep.move(file.path, 'uploads'))) {
        r.kept.uploads++;
        continue;
      }
      // Only if the record still names that file: an upload of the same hash may have replaced it meanwhile.
      if ((await store.getFile(teamID, hash))?.path === file.path && !fs.existsSync(file.path)) await store.deleteFile(teamID, hash);
      await this.o.ledger?.release(teamID, `bytes:upload:${hash}:${file.sha256}`);
      if (!gone) r.removed.uploads++;
    }
    for (const team of await entries(this.dirs.files)) {
      for (const name of await entries(join(this.dirs.files, team))) {
        const p = join(this.dirs.files, team, name);
        if (recorded.has(resolve(p)) || ageSeconds(p, this.now()) < this.staleSeconds) continue;
        if (await sweep.move(p, 'uploads')) r.removed.uploads++;
      }
    }
  }

  /**
   * The image store (runtime/images/pull.ts): unreferenced unpacked layers, then image records missing a layer, then
   * blobs no remaining record names, then stale pull scratch. Left whole for the next run while a pull holds it.
   */
  private async images(sweep: Sweep, unused: (p: string) => boolean): Promise<void> {
    const root = this.dirs.images;
    const r = sweep.report;
    if (!fs.existsSync(root)) return;
    if (sweep.tracker.covered(root)) {
      // Held as a whole: a pull is (or was, since this run began) under way.
      r.skipped.push('the image store: a pull was under way');
      return;
    }
    const layerDirs: string[] = [];
    for (const mapping of await entries(join(root, 'layers')))
      for (const name of await entries(join(root, 'layers', mapping))) layerDirs.push(join(root, 'layers', mapping, name));
    for (const p of layerDirs) {
      if (basename(p).startsWith('.')) continue;
      if (unused(p) && (await sweep.move(p, 'images'))) r.removed.imageLayers++;
      else r.kept.imageLayers++;
    }
    const layerExists = (diffId: string) => layerDirs.some((p) => basename(p) === diffId.replace(':', '-') && fs.existsSync(p));
    const keptBlobs = new Set<string>();
    for (const name of await entries(join(root, 'images'))) {
      const p = join(root, 'images', name);
      let record: { config: string; layers: Array<{ digest: string }> } | undefined;
      let diffIds: string[] = [];
      try {
        record = JSON.parse(await readFile(p, 'utf8')) as { config: string; layers: Array<{ digest: string }> };
        diffIds = ((JSON.parse(record.config) as { rootfs?: { diff_ids?: string[] } }).rootfs?.diff_ids ?? []).filter(
          (d) => typeof d === 'string',
        );
      } catch {
        record = undefined;
      }
      if (record && diffIds.every(layerExists)) {
        keptBlobs.add(`sha256-${createHash('sha256').update(record.config).digest('hex')}`);
        for (const l of record.layers) keptBlobs.add(l.digest.replace(':', '-'));
      } else if ((record || ageSeconds(p, this.now()) >= this.staleSeconds) && (await sweep.move(p, 'images'))) r.removed.images++;
    }
    for (const algo of await entries(join(root, 'blobs'))) {
      for (const name of await entries(join(root, 'blobs', algo))) {
        const p = join(root, 'blobs', algo, name);
        if (keptBlobs.has(`${algo}-${name}`) || ageSeconds(p, this.now()) < this.o.keepUnusedSeconds) continue;
        if (await sweep.move(p, 'images')) r.removed.blobs++;
      }
    }
    for (const name of await entries(join(root, 'tmp'))) {
      const p = join(root, 'tmp', name);
      if (ageSeconds(p, this.now()) >= this.staleSeconds && (await sweep.move(p, 'scratch'))) r.removed.scratch++;
    }
  }
}
