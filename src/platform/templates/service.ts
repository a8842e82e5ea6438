/**
 * The template service behind the routes: templates and their names, builds and their logs, COPY uploads, and the
 * resolver sandboxes use to find a template's ready build. One build per template runs at a time.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { rm, utimes } from 'node:fs/promises';
import { PathHolds, type Release } from '../../util/path-holds';
import type Redis from 'ioredis';
import { AdmissionError, type DiskAdmission } from '../../runtime/admission';
import { MIB } from '../../runtime/sandbox-disk';
import type { BaseImages, StepExecutor } from '../../runtime/types';
import { ENVD_VERSION } from '../../contract/envd-version';
import { ApiError, type ApiRequest } from '../http/types';
import type { TemplateForSandbox, TemplateResolver } from '../sandboxes/template-resolver';
import { type Caller, DEFAULT_TEAM_ID, mayAct, teamOf } from '../teams/model';
import type { QuotaLedger } from '../teams/quotas';
import { BuildRunner, type TemplatePreinstall } from './build-runner';
import { BuildSlots, SlotsClosed } from './build-slots';
import { type BuildLimits, defaultBuildLimits } from '../../config';
import { MAX_UPLOAD_BYTES, saveUpload, TooLargeError, UploadRefused, uploadFilesHash } from './files';
import { newBuildID, newTemplateID } from './ids';
import { DEFAULT_TAG, parseTemplateRef, splitNameTag } from './names';
import { refsOf, resolveRef } from './tags';
import { DEFAULT_KEY_PREFIX, TemplateStore, type BuildRecord, type TemplateRecord } from './store';
import { checkUpload, signUpload } from './upload-url';
import { stepValidator, type TemplateValidator } from './validate';
import { type BuildPlan, planBuild } from './plan';
import { ImagePullError } from '../../runtime/images/skopeo';
import { resolveImage } from '../../runtime/images/pull';
import { BASE_STEP } from './wire';
import { OPEN_TEMPLATE_LIMITS, templateDiskMB, templateLimitProblems, type TemplateLimits } from './limits';
import type { BuildReason, BuildStatus, CreateTemplateBody, ListedTemplate, LogEntry, StartBuildBody } from './wire';

export interface TemplateServiceOptions {
  /** The platform's Redis; everything goes under `keyPrefix`. */
  redis: Redis;
  executor: StepExecutor;
  baseImages: BaseImages;
  /** Layers, uploads and scratch space live under this directory. */
  dataDir: string;
  /** The data root's disk check (runtime/admission.ts): an upload or an image pull may take at most the room it leaves. */
  diskAdmission?: DiskAdmission;
  /**
   * Starts a finished template once to check its start and ready commands: `sandboxValidator` (a real sandbox, on a
   * platform) or, the default, `stepValidator` (a one-shot container over its layers in a network namespace of its own).
   */
  validator?: TemplateValidator;
  keyPrefix?: string;
  /** Base of the upload URLs handed to the SDK; default: http:// + the Host the request came to. */
  publicUrl?: string;
  /** Signs upload URLs; give the same secret to every platform instance sharing the Redis. Default: random. */
  uploadSecret?: Buffer;
  uploadUrlTtlSeconds?: number;
  stepTimeoutMs?: number;
  readyTimeoutMs?: number;
  /** Deadline, log caps and concurrent builds (the stack's `builds` keys); default: their defaults. */
  limits?: Partial<BuildLimits>;
  /** Each team's concurrent builds and stored upload bytes are held here (the platform's teams). */
  ledger?: QuotaLedger;
  /** What a template may ask for, and the disk it gets when it asks for none (limits.ts); default the wire's bounds. */
  resourceLimits?: TemplateLimits;
  /** Resources of a template created without cpuCount/memoryMB. */
  defaultCpuCount?: number;
  defaultMemoryMB?: number;
  /** Templates the platform has without a build here (`base`): `Template.exists` says yes for them. */
  builtInNames?: readonly string[];
  /** Told when a build ends (the Prometheus build metrics). */
  onBuildFinished?(outcome: 'ready' | 'error', seconds: number): void;
  /** Base images from registries (the stack config's `images`). */
  images?: ImageSources;
  /** Layers a template asks for by a file in it, added at the end of its build (see TemplatePreinstall). */
  preinstall?: TemplatePreinstall;
  /** What builds hold against the storage collector (the platform's one, shared with sandbox creates). */
  holds?: PathHolds;
}

/** Where the builder keeps its files under its data directory (docs/templates.md#storage). */
export interface TemplateDirs {
  /** Step layers, one directory each. */
  layers: string;
  /** COPY uploads, one directory per team. */
  files: string;
  /** Images pulled from registries: blobs, unpacked layers, image records (runtime/images/pull.ts). */
  images: string;
  /** Extracted COPY contexts and other scratch space of running builds. */
  scratch: string;
}

/** What the storage collector needs of the builder: its records, its directories, and how long a build may run. */
export interface TemplateStorage {
  store: TemplateStore;
  dirs: TemplateDirs;
  /** The builds' deadline: scratch older than this belongs to no running build. */
  deadlineSeconds: number;
}

/** Where base images come from: registries allowed over plain HTTP besides loopback ones, and what `e2bdev/base` means. */
export interface ImageSources {
  insecureRegistries?: readonly string[];
  e2bBase?: 'kit' | 'registry';
}

/** A template as the dashboard shows it: names, tags, and its newest builds. */
export interface TemplateOverview {
  templateID: string;
  names: string[];
  tags: ListedTag[];
  builds: Array<{ buildID: string; status: BuildStatus; createdAt: string; updatedAt: string; tags: string[] }>;
}

export interface ListedTag {
  tag: string;
  buildID: string;
  createdAt: string;
}

export interface RequestBuildResult {
  templateID: string;
  buildID: string;
  tags: string[];
  names: string[];
  aliases: string[];
  public: boolean;
}

export interface BuildStatusResult {
  templateID: string;
  buildID: string;
  status: BuildStatus;
  logs: string[];
  logEntries: LogEntry[];
  reason?: BuildReason;
}

const HASH = /^[0-9a-f]{64}$/;

export class TemplateService {
  readonly store: TemplateStore;
  private readonly runner: BuildRunner;
  private readonly secret: Buffer;
  private readonly running = new Set<Promise<void>>();
  private readonly slots: BuildSlots;
  private readonly limits: BuildLimits;
  private readonly dirs: TemplateDirs;
  private readonly holds: PathHolds;
  /** Builds being checked by starting them: resolvable by build ID until the check ends. */
  private readonly checking = new Map<string, TemplateForSandbox>();

  constructor(private readonly o: TemplateServiceOptions) {
    this.store = new TemplateStore(o.redis, o.keyPrefix ?? DEFAULT_KEY_PREFIX);
    this.secret = o.uploadSecret ?? randomBytes(32);
    this.limits = { ...defaultBuildLimits(), ...o.limits };
    this.slots = new BuildSlots(this.limits.concurrent);
    this.dirs = {
      layers: join(o.dataDir, 'layers'),
      files: join(o.dataDir, 'files'),
      images: join(o.dataDir, 'images'),
      scratch: join(o.dataDir, 'scratch'),
    };
    this.holds = o.holds ?? new PathHolds();
    const scratchDir = this.dirs.scratch;
    const inner = o.validator ?? stepValidator(o.executor, scratchDir);
    const validator: TemplateValidator = {
      validate: async (t, io) => {
        this.checking.set(t.buildID, t);
        try {
          return await inner.validate(t, io);
        } finally {
          this.checking.delete(t.buildID);
        }
      },
    };
    this.runner = new BuildRunner({
      store: this.store,
      executor: o.executor,
      baseImages: o.baseImages,
      validator,
      layersDir: this.dirs.layers,
      imagesDir: this.dirs.images,
      holds: this.holds,
      insecureRegistries: o.images?.insecureRegistries ?? [],
      ...(o.diskAdmission ? { diskAdmission: o.diskAdmission } : {}),
      scratchDir,
      stepTimeoutMs: o.stepTimeoutMs ?? 20 * 60_000,
      readyTimeoutMs: o.readyTimeoutMs ?? 60_000,
      limits: this.limits,
      onFinished: o.onBuildFinished,
      ...(o.preinstall ? { preinstall: o.preinstall } : {}),
    });
  }

  /** The records and directories the storage collector works on. */
  storage(): TemplateStorage {
    return { store: this.store, dirs: this.dirs, deadlineSeconds: this.limits.deadlineSeconds };
  }

  resolver(): TemplateResolver {
    return {
      resolve: (idOrAlias, teamID) => this.resolve(idOrAlias, teamID),
      names: async () => (await Promise.all((await this.store.listTemplates()).map((t) => refsOf(this.store, t)))).flat(),
    };
  }

  /** A name the caller's team does not have yet makes a new template of that team, even if another team has the name. */
  async requestBuild(body: CreateTemplateBody & { name: string }, caller: Caller): Promise<RequestBuildResult> {
    const { name, tag } = splitNameTag(body.name);
    const limits = this.o.resourceLimits ?? OPEN_TEMPLATE_LIMITS;
    const problems = templateLimitProblems(body, limits);
    if (problems.length > 0) throw new ApiError(400, `POST /v3/templates: ${problems.join('; ')}`);
    const now = new Date().toISOString();
    let template = await this.store.findTemplate(caller.teamID, name);
    if (!template) {
      template = {
        templateID: newTemplateID(),
        teamID: caller.teamID,
        names: [name],
        cpuCount: body.cpuCount ?? this.o.defaultCpuCount ?? 2,
        memoryMB: body.memoryMB ?? this.o.defaultMemoryMB ?? 1024,
        diskSizeMB: templateDiskMB(body.minFreeDiskMb, limits),
        createdAt: now,
        updatedAt: now,
        buildCount: 0,
      };
    }
    template.buildCount += 1;
    template.updatedAt = now;
    await this.store.putTemplate(template);
    const tags = [...new Set([...(tag ? [tag] : []), ...(body.tags ?? [])])];
    const build: BuildRecord = {
      buildID: newBuildID(),
      templateID: template.templateID,
      teamID: teamOf(template),
      status: 'waiting',
      createdAt: now,
      updatedAt: now,
      cpuCount: body.cpuCount ?? template.cpuCount,
      memoryMB: body.memoryMB ?? template.memoryMB,
      diskSizeMB:
        body.minFreeDiskMb !== undefined ? templateDiskMB(body.minFreeDiskMb, limits) : (template.diskSizeMB ?? limits.defaultDiskMB),
      tags: tags.length > 0 ? tags : [DEFAULT_TAG],
      layers: [],
      envs: {},
      user: 'user',
    };
    await this.store.putBuild(build);
    return {
      templateID: template.templateID,
      buildID: build.buildID,
      tags: build.tags,
      names: template.names,
      aliases: template.names,
      public: template.public ?? false,
    };
  }

  /** The caller's team's template (an admin's: any); another team's answers as a missing one does. */
  private async template(templateID: string, caller: Caller): Promise<TemplateRecord> {
    const found = await this.store.getTemplate(templateID);
    const t = found && mayAct(caller, teamOf(found)) ? found : undefined;
    if (!t) throw new ApiError(404, `template ${JSON.stringify(templateID)} not found; create it with POST /v3/templates (Template.build)`);
    return t;
  }

  private async build(templateID: string, buildID: string, caller: Caller): Promise<BuildRecord> {
    await this.template(templateID, caller);
    const b = await this.store.getBuild(buildID);
    if (!b || b.templateID !== templateID) throw new ApiError(404, `build ${JSON.stringify(buildID)} of template ${templateID} not found`);
    return b;
  }

  async fileUploadLink(templateID: string, hash: string, req: ApiRequest, caller: Caller): Promise<{ present: boolean; url?: string }> {
    const template = await this.template(templateID, caller);
    if (!HASH.test(hash)) throw new ApiError(400, `files hash: expected 64 hex digits (given: ${JSON.stringify(hash)})`);
    // Only this team's uploads count: another team's files under the same hash are not this team's to use.
    const stored = await this.store.getFile(teamOf(template), hash);
    const present = stored !== undefined && existsSync(stored.path);
    // Answered present, the SDK will not send it again: it counts as used now (the collector keeps it a while).
    if (present) await utimes(stored.path, new Date(), new Date()).catch(() => undefined);
    const expires = Math.floor(Date.now() / 1000) + (this.o.uploadUrlTtlSeconds ?? 3600);
    const sig = signUpload(this.secret, { templateID, hash, expires });
    const base = this.o.publicUrl ?? `http://${req.raw.headers.host ?? '127.0.0.1'}`;
    const url = `${base.replace(/\/$/, '')}/templates/${encodeURIComponent(templateID)}/files/${hash}/upload?expires=${expires}&sig=${sig}`;
    return { present, url };
  }

  async receiveUpload(templateID: string, hash: string, req: ApiRequest): Promise<void> {
    const check = checkUpload(
      this.secret,
      { templateID, hash, expires: Number(req.query.get('expires')) },
      req.query.get('sig'),
      Math.floor(Date.now() / 1000),
    );
    if (!check.ok) throw new ApiError(403, `upload refused: ${check.reason}`);
    if (!HASH.test(hash)) throw new ApiError(400, `files hash: expected 64 hex digits (given: ${JSON.stringify(hash)})`);
    // The signature names the template; the upload is its team's, stored apart from every other team's.
    const template = await this.store.getTemplate(templateID);
    if (!template) throw new ApiError(404, `template ${JSON.stringify(templateID)} not found`);
    const teamID = teamOf(template);
    // At most the room the data root has left under limits.diskOvercommit. A declared length is held as the
    // admission's reservation until the bytes are on the file system, so two uploads cannot both take the last room,
    // and one past the room is refused before a byte is read; a chunked body is bounded by the room as it comes.
    const declared = Number(req.raw.headers['content-length']);
    if (declared > MAX_UPLOAD_BYTES) throw new ApiError(413, `upload refused: upload larger than ${MAX_UPLOAD_BYTES} bytes`);
    let release: (() => void) | undefined;
    try {
      release = declared > 0 ? this.o.diskAdmission?.reserve(Math.ceil(declared / MIB), 'this upload') : undefined;
    } catch (err) {
      if (err instanceof AdmissionError) throw new ApiError(429, `upload refused: ${err.message}; nothing was kept`);
      throw err;
    }
    const roomMB = release ? undefined : this.o.diskAdmission?.roomMB();
    const roomBytes = roomMB === undefined ? undefined : Math.max(0, roomMB) * MIB;
    try {
      const saved = await saveUpload(
        join(this.dirs.files, teamID),
        hash,
        req.raw,
        Math.min(MAX_UPLOAD_BYTES, roomBytes ?? MAX_UPLOAD_BYTES),
      );
      try {
        await this.o.ledger?.reserve(teamID, `bytes:upload:${hash}:${saved.sha256}`, { templateBytes: saved.bytes });
      } catch (err) {
        await rm(saved.path, { force: true });
        throw err;
      }
      await this.store.putFile(teamID, hash, saved);
    } catch (err) {
      if (err instanceof TooLargeError && roomBytes !== undefined && roomBytes < MAX_UPLOAD_BYTES)
        throw new ApiError(
          429,
          `upload refused: the data root has ${roomMB} MB left under its size × limits.diskOvercommit, and the upload is larger; nothing was kept`,
        );
      if (err instanceof TooLargeError) throw new ApiError(413, `upload refused: ${err.message}`);
      if (err instanceof UploadRefused) throw new ApiError(400, `upload refused: ${err.message}; nothing was kept`);
      throw err;
    } finally {
      release?.();
    }
  }

  async startBuild(templateID: string, buildID: string, body: StartBuildBody, caller: Caller): Promise<void> {
    const build = await this.build(templateID, buildID, caller);
    const planned = planBuild(body, { supportedSuites: this.o.baseImages.supported, e2bBase: this.o.images?.e2bBase });
    if (!planned.ok) {
      const message = planned.problems.map((p) => p.message).join('; ');
      if (build.status === 'waiting') await this.fail(build, { message, step: planned.problems[0]!.step });
      throw new ApiError(400, message);
    }
    const base = planned.plan.base;
    if (base.kind === 'registry' && build.status === 'waiting') {
      // Asked before the build starts (one registry round, nothing stored): wrong credentials, an unknown tag or an
      // image for another platform are the request's error, answered at once.
      try {
        await resolveImage(base.image, {
          storeDir: join(this.o.dataDir, 'images'),
          ...(base.credentials ? { credentials: base.credentials } : {}),
          insecureRegistries: this.o.images?.insecureRegistries ?? [],
          timeoutMs: 120_000,
        });
      } catch (err) {
        if (!(err instanceof ImagePullError)) throw err;
        await this.fail(build, { message: err.message, step: BASE_STEP });
        throw new ApiError(400, err.message);
      }
    }
    if (build.status !== 'waiting')
      throw new ApiError(
        409,
        `build ${buildID} of template ${templateID} was already started (status ${build.status}); request a new build with POST /v3/templates`,
      );
    // The uploads stay held against the storage collector until the build ends.
    const held: Release[] = [];
    const releaseHeld = () => {
      for (const release of held) release();
    };
    let pinned: Map<string, string>;
    try {
      pinned = await this.checkUploads(build, planned.plan, held);
    } catch (err) {
      releaseHeld();
      throw err;
    }
    if (!(await this.store.claimRunning(templateID, buildID))) {
      releaseHeld();
      const other = await this.store.runningBuild(templateID);
      const message = `template ${templateID} already has a build running (${other}); wait for it to finish, then build again`;
      await this.fail(build, { message });
      throw new ApiError(409, message);
    }
    const hold = `build:${buildID}` as const;
    try {
      await this.o.ledger?.reserve(teamOf(build), hold, { builds: 1 });
    } catch (err) {
      releaseHeld();
      await this.store.releaseRunning(templateID, buildID);
      if (err instanceof ApiError) await this.fail(build, { message: err.message });
      throw err;
    }
    const job = this.whenSlotFree(build)
      .then(async (release) => {
        try {
          await this.runner.run(build, body, planned.plan, pinned);
        } finally {
          release();
        }
      })
      .catch(async (err: Error) => {
        // Only a refused wait gets here (the runner records every failure of its own): the platform is stopping.
        await this.store.releaseRunning(templateID, buildID);
        await this.fail(build, { message: err instanceof SlotsClosed ? `${err.message}; build again` : err.message });
      })
      .catch(() => undefined)
      .finally(() => this.o.ledger?.release(teamOf(build), hold))
      .finally(releaseHeld)
      .finally(() => this.running.delete(job));
    this.running.add(job);
  }

  /** A slot for the build (builds.concurrent); while it waits, its log says so and how many are ahead of it. */
  private whenSlotFree(build: BuildRecord): Promise<() => void> {
    return this.slots.acquire((ahead) => {
      void this.store
        .appendLog(build.buildID, {
          timestamp: new Date().toISOString(),
          level: 'info',
          message: `Waiting for a build slot: ${this.slots.running} builds are running on this host, at most ${this.slots.size} at once (builds.concurrent); ${ahead} ${ahead === 1 ? 'build waits' : 'builds wait'} ahead of this one`,
        })
        .catch(() => undefined);
    });
  }

  /**
   * Each COPY's upload checked against its files hash (recomputed from the archive with the step's source and
   * destination, files-hash.ts) before anything runs: a mismatch fails the build with a 400 and the upload is
   * removed. Answers the sha256 of every upload's bytes as checked: its COPY step uses exactly those bytes.
   */
  private async checkUploads(build: BuildRecord, plan: BuildPlan, held: Release[]): Promise<Map<string, string>> {
    const pinned = new Map<string, string>();
    const teamID = teamOf(build);
    for (const [i, step] of plan.steps.entries()) {
      if (step.kind !== 'COPY') continue;
      const stored = await this.store.getFile(teamID, step.filesHash);
      const release = stored && (await this.holds.claim([stored.path]));
      if (!stored || !release) continue; // the COPY step says that nothing was uploaded
      held.push(release);
      const label = `step ${i + 1} (COPY ${step.src} ${step.dest})`;
      const refuse = async (why: string): Promise<never> => {
        await this.removeUpload(teamID, step.filesHash, stored);
        const message = `${label}: the files uploaded for files hash ${step.filesHash} ${why}; they were removed, upload them again`;
        await this.fail(build, { message, step: String(i + 1) });
        throw new ApiError(400, message);
      };
      if (stored.checkable === false) {
        // Its hash cannot be recomputed (files-hash.ts); its COPY unpacks exactly the bytes received, or fails.
        pinned.set(step.filesHash, stored.sha256);
        continue;
      }
      const checked = await uploadFilesHash(stored.path, step.src, step.dest).catch((err: Error) =>
        err instanceof UploadRefused ? refuse(`are refused: ${err.message}`) : Promise.reject(err),
      );
      if (checked.verifiable && checked.hash !== step.filesHash) await refuse(`do not match it (they hash to ${checked.hash})`);
      pinned.set(step.filesHash, checked.sha256);
    }
    return pinned;
  }

  private async removeUpload(teamID: string, hash: string, stored: { path: string; sha256: string }): Promise<void> {
    await this.store.deleteFile(teamID, hash);
    await rm(stored.path, { force: true });
    await this.o.ledger?.release(teamID, `bytes:upload:${hash}:${stored.sha256}`);
  }

  private async fail(build: BuildRecord, reason: BuildReason): Promise<void> {
    build.status = 'error';
    build.reason = reason;
    build.updatedAt = new Date().toISOString();
    await this.store.putBuild(build);
    await this.store.appendLog(build.buildID, {
      timestamp: build.updatedAt,
      level: 'error',
      message: `Build failed: ${reason.message}`,
      ...(reason.step ? { step: reason.step } : {}),
    });
  }

  async buildStatus(templateID: string, buildID: string, offset: number, limit: number, caller: Caller): Promise<BuildStatusResult> {
    const build = await this.build(templateID, buildID, caller);
    const logEntries = await this.store.logs(buildID, offset, limit);
    return { templateID, buildID, status: build.status, logs: [], logEntries, ...(build.reason ? { reason: build.reason } : {}) };
  }

  /** The caller's team's templates (`teamID` may name only that team; an admin's may name any, or none for all). */
  async list(caller: Caller, teamID?: string): Promise<ListedTemplate[]> {
    if (teamID !== undefined && !mayAct(caller, teamID)) throw new ApiError(404, `team ${JSON.stringify(teamID)} not found`);
    const wanted = teamID ?? (caller.role === 'admin' ? undefined : caller.teamID);
    const templates = (await this.store.listTemplates()).filter((t) => wanted === undefined || teamOf(t) === wanted);
    const listed: ListedTemplate[] = [];
    for (const t of templates) {
      // The default tag's build, or (a template built only under other tags) its newest ready one.
      const ready =
        (await resolveRef(this.store, teamOf(t), t.templateID))?.build ??
        (t.readyBuildID !== undefined ? await this.store.getBuild(t.readyBuildID) : undefined);
      listed.push({
        templateID: t.templateID,
        buildID: ready?.buildID ?? '',
        cpuCount: ready?.cpuCount ?? t.cpuCount,
        memoryMB: ready?.memoryMB ?? t.memoryMB,
        diskSizeMB: ready?.diskSizeMB ?? t.diskSizeMB ?? (this.o.resourceLimits ?? OPEN_TEMPLATE_LIMITS).defaultDiskMB,
        public: t.public ?? false,
        aliases: t.names,
        names: t.names,
        createdAt: t.createdAt,
        updatedAt: t.updatedAt,
        lastSpawnedAt: null,
        spawnCount: 0,
        buildCount: t.buildCount,
        envdVersion: ENVD_VERSION,
        buildStatus: ready ? 'ready' : (await this.store.runningBuild(t.templateID)) ? 'building' : 'error',
      });
    }
    return listed;
  }

  /** What `Template.exists` asks: yes for every reference a create accepts (a `name:tag` only while the tag is set). */
  async aliasInfo(alias: string, caller: Caller): Promise<{ templateID: string; public: boolean }> {
    if (this.o.builtInNames?.includes(alias)) return { templateID: alias, public: true };
    const ref = parseTemplateRef(alias);
    if (!ref.ok) throw new ApiError(400, `template name ${ref.message}`);
    const t = await this.store.findUsable(caller.teamID, ref.name);
    if (t === undefined || t.templateID === alias) throw new ApiError(404, `no template has the alias ${JSON.stringify(ref.name)}`);
    if (ref.tag !== undefined && !(await this.store.tag(t.templateID, ref.tag)))
      throw new ApiError(404, `template ${JSON.stringify(ref.name)} has no tag ${JSON.stringify(ref.tag)}`);
    return { templateID: t.templateID, public: t.public ?? false };
  }

  /** The caller's team's template by ID or name (tags are its own team's to change; another team's is unknown). */
  private async ownByRefName(name: string, what: string, caller: Caller): Promise<TemplateRecord> {
    const found = (await this.store.getTemplate(name)) ?? (await this.store.findTemplate(caller.teamID, name));
    if (!found || !mayAct(caller, teamOf(found)))
      throw new ApiError(404, `${what}: no template has the ID or name ${JSON.stringify(name)}`);
    return found;
  }

  /** `Template.assignTags(target, tags)`: the tags move, all at once, to the build `target` (name:tag) points at. */
  async assignTags(target: string, tags: readonly string[], caller: Caller): Promise<{ buildID: string; tags: string[] }> {
    const ref = parseTemplateRef(target);
    if (!ref.ok) throw new ApiError(400, `target ${ref.message}`);
    const t = await this.ownByRefName(ref.name, 'target', caller);
    const fromTag = ref.tag ?? DEFAULT_TAG;
    const buildID = await this.store.assignFromTag(t.templateID, fromTag, tags, new Date().toISOString());
    if (buildID === undefined)
      throw new ApiError(404, `target ${JSON.stringify(target)}: template ${ref.name} has no build tagged ${JSON.stringify(fromTag)}`);
    return { buildID, tags: [...tags] };
  }

  /** `Template.removeTags(name, tags)`: all of them, or none when one is not set (404 naming those). */
  async removeTags(name: string, tags: readonly string[], caller: Caller): Promise<void> {
    const ref = parseTemplateRef(name);
    if (!ref.ok) throw new ApiError(400, `name ${ref.message}`);
    if (ref.tag !== undefined) throw new ApiError(400, `name ${JSON.stringify(name)}: give the template name alone; the tags go in "tags"`);
    const t = await this.ownByRefName(ref.name, 'name', caller);
    const missing = await this.store.removeTags(t.templateID, tags);
    if (missing.length > 0)
      throw new ApiError(404, `template ${ref.name} has no tag ${missing.map((m) => JSON.stringify(m)).join(', ')}; nothing was removed`);
  }

  /** `Template.getTags(idOrName)`, sorted by tag. */
  async tagsOf(idOrName: string, caller: Caller): Promise<ListedTag[]> {
    return this.listedTags((await this.ownByRefName(idOrName, 'template', caller)).templateID);
  }

  private async listedTags(templateID: string): Promise<ListedTag[]> {
    return [...(await this.store.tags(templateID))]
      .map(([tag, r]) => ({ tag, buildID: r.buildID, createdAt: r.createdAt }))
      .sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  }

  /** A build's status and its log from `offset` (for the dashboard, which is the operator's: any team's build). */
  async buildLog(
    templateID: string,
    buildID: string,
    offset: number,
    limit: number,
  ): Promise<{ status: BuildStatus; entries: LogEntry[] }> {
    const b = await this.store.getBuild(buildID);
    if (!b || b.templateID !== templateID) throw new ApiError(404, `build ${JSON.stringify(buildID)} of template ${templateID} not found`);
    return { status: b.status, entries: await this.store.logs(buildID, offset, limit) };
  }

  /** Every template (all teams: the dashboard is the operator's) with its tags and newest `buildsEach` builds. */
  async overview(buildsEach = 10): Promise<TemplateOverview[]> {
    const out: TemplateOverview[] = [];
    for (const t of await this.store.listTemplates()) {
      const builds = (await Promise.all((await this.store.buildsOf(t.templateID)).map((id) => this.store.getBuild(id))))
        .filter((b): b is BuildRecord => b !== undefined)
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .slice(0, buildsEach)
        .map(({ buildID, status, createdAt, updatedAt, tags }) => ({ buildID, status, createdAt, updatedAt, tags }));
      out.push({ templateID: t.templateID, names: t.names, tags: await this.listedTags(t.templateID), builds });
    }
    return out;
  }

  /** E2B's template update: only `public`, by the owning team; answers the template's names. */
  async update(templateID: string, visible: boolean | undefined, caller: Caller): Promise<{ names: string[] }> {
    const t = await this.template(templateID, caller);
    if (visible !== undefined && !(await this.store.setPublic(t, visible)))
      throw new ApiError(409, `another public template already has one of the names ${t.names.join(', ')}; rename this one to publish it`);
    return { names: t.names };
  }

  async countOf(teamID: string): Promise<number> {
    return (await this.store.listTemplates()).filter((t) => teamOf(t) === teamID).length;
  }

  async delete(templateID: string, caller: Caller): Promise<void> {
    const t = await this.template(templateID, caller);
    if (await this.store.runningBuild(templateID))
      throw new ApiError(409, `template ${templateID} has a build running; delete it when the build has finished`);
    await this.store.deleteTemplate(t);
  }

  /** What `teamID` may start: its own templates and public ones. */
  async resolve(idOrAlias: string, teamID: string = DEFAULT_TEAM_ID): Promise<TemplateForSandbox | undefined> {
    const checking = this.checking.get(idOrAlias);
    if (checking) return checking;
    const resolved = await resolveRef(this.store, teamID, idOrAlias);
    if (!resolved) return undefined;
    const { template: t, build: b } = resolved;
    return {
      templateID: t.templateID,
      alias: t.names[0],
      buildID: b.buildID,
      layers: b.layers,
      memoryMB: b.memoryMB,
      cpuCount: b.cpuCount,
      ...(b.diskSizeMB !== undefined ? { diskSizeMB: b.diskSizeMB } : {}),
      ...(b.startCmd ? { startCmd: b.startCmd } : {}),
      ...(b.readyCmd ? { readyCmd: b.readyCmd } : {}),
      envs: b.envs,
      user: b.user,
      ...(b.workdir ? { workdir: b.workdir } : {}),
    };
  }

  /** Builds a crashed platform left `building` can never finish: mark them failed and free their templates. */
  async recover(): Promise<number> {
    await this.store.adoptTeamlessTemplates();
    let recovered = 0;
    for (const t of await this.store.listTemplates()) {
      const running = await this.store.runningBuild(t.templateID);
      if (running === undefined) continue;
      const b = await this.store.getBuild(running);
      if (b && (b.status === 'building' || b.status === 'waiting')) {
        b.status = 'error';
        b.reason = { message: 'the platform stopped while this build ran; build again' };
        b.updatedAt = new Date().toISOString();
        await this.store.putBuild(b);
        recovered += 1;
      }
      await this.store.releaseRunning(t.templateID, running);
    }
    return recovered;
  }

  /** Refuses the builds still waiting for a slot, waits for the ones running, then closes the step executor. */
  async close(): Promise<void> {
    this.slots.close();
    await Promise.allSettled([...this.running]);
    await this.o.executor.close?.();
  }
}

/** A template service whose builds a stopped platform left running are marked failed first (recover). */
export async function createTemplateService(o: TemplateServiceOptions): Promise<TemplateService> {
  const service = new TemplateService(o);
  await service.recover();
  return service;
}
