/**
 * The storage collector: removes from the template builder's data directory what nothing uses any more
 * (docs/templates.md#storage). Step layers, pulled image layers and COPY uploads that no kept build, running or
 * paused sandbox or snapshot references, once unchanged for `keepUnusedSeconds`; the shifted copies of removed
 * layers; image records missing a layer, and blobs no kept image record names; and scratch older than a build may
 * run (what a stopped build left). Both image stores: the builder's, and the MCP servers' a create pulls into; in
 * each, the relocated copies of MCP images (`mcp/`, hard links into the pulled layers) no record references go, and
 * the pulled layers of a copy that stays are kept with it. The build records and logs of deleted templates go too,
 * once no sandbox or snapshot names their build and they have not changed for `keepUnusedSeconds`.
 *
 * Races: work under way holds what it uses (util/path-holds.ts: a build its layers, uploads and the image store
 * while it pulls; a create its template's layers until its record names them). The collector starts tracking
 * holds before it reads the records, so a hold released after that read still keeps its paths, and it moves each
 * path out of the way (a rename into a trash directory on the same file system) inside the holds' exclusive
 * section, after checking it was not held. The trash is measured and removed after: a file counts as freed only
 * when all its hard links are in the trash (a relocated MCP image copy shares its files with the pulled layers).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { HoldTracker, PathHolds } from '../../util/path-holds';
import { freedBytes } from '../../util/disk-usage';
import type { SandboxRecord } from '../sandboxes/record';
import type { SnapshotRecord } from '../snapshots/store';
import type { QuotaLedger } from '../teams/quotas';
import type { BuildRecord } from '../templates/store';
import type { TemplateStorage } from '../templates/service';
import { keptBuildIDs, liveReferences, type TemplateRefs, uploadKey } from './references';

/** What one collection removed and freed. */
export interface GcReport {
  removed: {
    layers: number;
    shiftedCopies: number;
    uploads: number;
    imageLayers: number;
    images: number;
    blobs: number;
    /** Relocated copies of MCP images (`<store>/mcp/`), error layers included. */
    imageCopies: number;
    scratch: number;
    /** Build records of deleted templates, each with its log. */
    builds: number;
  };
  /** Bytes the removed files took on disk (`du`), in total and per kind; a file still linked elsewhere frees nothing. */
  bytesFreed: number;
  bytesFreedBy: { layers: number; uploads: number; images: number; scratch: number };
  /** Referenced or held, so kept. */
  kept: { layers: number; uploads: number; imageLayers: number; imageCopies: number };
  /** Parts left for the next run, and why (a pull under way holds the image store). */
  skipped: string[];
  seconds: number;
}

export interface CollectorOptions {
  templates: TemplateStorage;
  /** The image store creates pull MCP servers' images into (`<state>/images`, sandboxes/mcp-images.ts), if any. */
  mcpImages?: string;
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

/** The digest in a relocated MCP image's directory name (`<key>-sha256-<hex>`, sandboxes/mcp-images.ts). */
const COPY_DIGEST = /-(sha256-[0-9a-f]{64})$/;

/** What a pulled image's record says (runtime/images/pull.ts): its config (with the diff ids) and layer blobs. */
interface ImageRecordFile {
  path: string;
  /** `sha256-<hex>` of the image's digest, from the record's name (`<digest>-<os>-<arch>.json`). */
  digest: string;
  /** The unpacked layers' directory names (`sha256-<diff id hex>`), bottom first; undefined when unreadable. */
  layerNames?: string[];
  blobs?: string[];
}

async function readImageRecord(path: string): Promise<ImageRecordFile> {
  const digest = /^(sha256-[0-9a-f]{64})-/.exec(basename(path))?.[1] ?? '';
  try {
    const record = JSON.parse(await readFile(path, 'utf8')) as { config: string; layers: Array<{ digest: string }> };
    const diffIds = ((JSON.parse(record.config) as { rootfs?: { diff_ids?: string[] } }).rootfs?.diff_ids ?? []).filter(
      (d) => typeof d === 'string',
    );
    return {
      path,
      digest,
      layerNames: diffIds.map((d) => d.replace(':', '-')),
      blobs: [
        `sha256-${createHash('sha256').update(record.config).digest('hex')}`,
        ...record.layers.map((l) => l.digest.replace(':', '-')),
      ],
    };
  } catch {
    return { path, digest };
  }
}

/** One collection: where its trash goes, and what it has moved there. */
class Sweep {
  readonly report: GcReport = {
    removed: { layers: 0, shiftedCopies: 0, uploads: 0, imageLayers: 0, images: 0, blobs: 0, imageCopies: 0, scratch: 0, builds: 0 },
    bytesFreed: 0,
    bytesFreedBy: { layers: 0, uploads: 0, images: 0, scratch: 0 },
    kept: { layers: 0, uploads: 0, imageLayers: 0, imageCopies: 0 },
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
      await this.images(sweep, unused, this.dirs.images, 'the image store');
      if (this.o.mcpImages !== undefined) await this.images(sweep, unused, this.o.mcpImages, "the MCP servers' image store");
      await this.deletedTemplatesBuilds(sweep, templates, sandboxes, snapshots);
      for (const name of await entries(this.dirs.scratch)) {
        const p = join(this.dirs.scratch, name);
        if (ageSeconds(p, this.now()) >= this.staleSeconds && (await sweep.move(p, 'scratch'))) sweep.report.removed.scratch++;
      }

      const r = sweep.report;
      const kinds = Object.keys(r.bytesFreedBy) as Kind[];
      // What the moved entries take, a file only once all its links are there; not the trash's own directories.
      const freed = await freedBytes(kinds.map((kind) => join(sweep.trash, kind)));
      kinds.forEach((kind, i) => {
        r.bytesFreedBy[kind] = freed[i]!;
      });
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
      `gc: removed ${removed.length > 0 ? removed.join(', ') : 'nothing'}; freed ${r.bytesFreed} bytes (${(r.bytesFreed / 1048576).toFixed(1)} MiB) in ${r.seconds.toFixed(1)} s; kept ${r.kept.layers} layers, ${r.kept.imageLayers} image layers, ${r.kept.imageCopies} image copies, ${r.kept.uploads} uploads${r.skipped.length > 0 ? `; skipped: ${r.skipped.join('; ')}` : ''}`,
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
   * One image store (runtime/images/pull.ts): the relocated MCP image copies no record references (`mcp/`), then
   * unreferenced unpacked layers (those a remaining copy was made from stay with it), image records missing a layer,
   * blobs no remaining record names, and stale pull scratch. Left whole for the next run while a pull holds it.
   */
  private async images(sweep: Sweep, unused: (p: string) => boolean, root: string, name: string): Promise<void> {
    const r = sweep.report;
    if (!fs.existsSync(root)) return;
    if (sweep.tracker.covered(root)) {
      // Held as a whole: a pull is (or was, since this run began) under way.
      r.skipped.push(`${name}: a pull was under way`);
      return;
    }
    const copiedDigests = await this.imageCopies(sweep, unused, join(root, 'mcp'));
    const records = await Promise.all((await entries(join(root, 'images'))).map((n) => readImageRecord(join(root, 'images', n))));
    const copied = new Set(records.filter((rec) => copiedDigests.has(rec.digest)).flatMap((rec) => rec.layerNames ?? []));
    const layerDirs: string[] = [];
    for (const mapping of await entries(join(root, 'layers')))
      for (const layer of await entries(join(root, 'layers', mapping))) layerDirs.push(join(root, 'layers', mapping, layer));
    for (const p of layerDirs) {
      if (basename(p).startsWith('.')) continue;
      if (!copied.has(basename(p)) && unused(p) && (await sweep.move(p, 'images'))) r.removed.imageLayers++;
      else r.kept.imageLayers++;
    }
    const layerExists = (layerName: string) => layerDirs.some((p) => basename(p) === layerName && fs.existsSync(p));
    const keptBlobs = new Set<string>();
    for (const rec of records) {
      if (rec.layerNames?.every(layerExists)) for (const b of rec.blobs ?? []) keptBlobs.add(b);
      else if ((rec.layerNames || ageSeconds(rec.path, this.now()) >= this.staleSeconds) && (await sweep.move(rec.path, 'images')))
        r.removed.images++;
    }
    for (const algo of await entries(join(root, 'blobs'))) {
      for (const blob of await entries(join(root, 'blobs', algo))) {
        const p = join(root, 'blobs', algo, blob);
        if (keptBlobs.has(`${algo}-${blob}`) || ageSeconds(p, this.now()) < this.o.keepUnusedSeconds) continue;
        if (await sweep.move(p, 'images')) r.removed.blobs++;
      }
    }
    for (const tmp of await entries(join(root, 'tmp'))) {
      const p = join(root, 'tmp', tmp);
      if (ageSeconds(p, this.now()) >= this.staleSeconds && (await sweep.move(p, 'scratch'))) r.removed.scratch++;
    }
  }

  /**
   * The relocated copies of MCP images in `dir` (`<key>-<digest>/info`, `.../layer-<n>`, `errors/<key>-<hash>`: each
   * a layer a sandbox or a build names) that nothing references, once unchanged for keepUnusedSeconds; their
   * half-made copies once stale; an image's directory once empty. Resolves to the digests of the images a copy of
   * which stays.
   */
  private async imageCopies(sweep: Sweep, unused: (p: string) => boolean, dir: string): Promise<Set<string>> {
    const r = sweep.report;
    const kept = new Set<string>();
    for (const name of await entries(dir)) {
      const digest = COPY_DIGEST.exec(name)?.[1];
      if (name !== 'errors' && digest === undefined) continue; // not a copy's directory
      const base = join(dir, name);
      let left = 0;
      for (const child of await entries(base)) {
        const p = join(base, child);
        if (child.endsWith('.tmp')) {
          if (ageSeconds(p, this.now()) >= this.staleSeconds && (await sweep.move(p, 'scratch'))) r.removed.scratch++;
          else left++;
        } else if (unused(p) && (await sweep.move(p, 'images'))) r.removed.imageCopies++;
        else {
          r.kept.imageCopies++;
          left++;
          if (digest !== undefined) kept.add(digest);
        }
      }
      // Nothing makes a copy here meanwhile: a create or a build holds the whole store while it makes one.
      if (left === 0 && name !== 'errors') await rmdir(base).catch(() => undefined);
    }
    return kept;
  }

  /**
   * The build records and logs of templates that were deleted, once no sandbox or snapshot names the build, it is
   * not running, and it has not changed for keepUnusedSeconds (their layers go by the rules above).
   */
  private async deletedTemplatesBuilds(
    sweep: Sweep,
    templates: readonly TemplateRefs[],
    sandboxes: ReadonlyArray<Pick<SandboxRecord, 'buildID'>>,
    snapshots: ReadonlyArray<Pick<SnapshotRecord, 'template'>>,
  ): Promise<void> {
    const { store } = this.o.templates;
    const existing = new Set(templates.map((t) => t.template.templateID));
    const named = new Set([...sandboxes.map((s) => s.buildID), ...snapshots.map((s) => s.template.buildID)]);
    for (const templateID of await store.templatesWithBuilds()) {
      // Listed before: a template made since is not deleted.
      if (existing.has(templateID) || (await store.getTemplate(templateID)) !== undefined) continue;
      const running = await store.runningBuild(templateID);
      for (const buildID of await store.buildsOf(templateID)) {
        if (named.has(buildID) || buildID === running) continue;
        const build = await store.getBuild(buildID);
        if (build && (this.now() - Date.parse(build.updatedAt)) / 1000 < this.o.keepUnusedSeconds) continue;
        await store.deleteBuild(templateID, buildID);
        sweep.report.removed.builds++;
      }
    }
  }
}
