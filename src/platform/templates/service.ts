/**
 * The template service behind the routes: templates and their names, builds and their logs, COPY uploads, and the
 * resolver sandboxes use to find a template's ready build. One build per template runs at a time.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type Redis from 'ioredis';
import type { BaseImages, StepExecutor } from '../../runtime/types';
import { ENVD_VERSION } from '../../contract/envd-version';
import { ApiError, type ApiRequest } from '../http/types';
import type { TemplateForSandbox, TemplateResolver } from '../sandboxes/template-resolver';
import { BuildRunner } from './build-runner';
import { saveUpload, TooLargeError } from './files';
import { newBuildID, newTemplateID } from './ids';
import { splitNameTag } from './names';
import { DEFAULT_KEY_PREFIX, TemplateStore, type BuildRecord, type TemplateRecord } from './store';
import { checkUpload, signUpload } from './upload-url';
import { stepValidator, type TemplateValidator } from './validate';
import { planBuild } from './plan';
import type { BuildReason, BuildStatus, CreateTemplateBody, ListedTemplate, LogEntry, StartBuildBody } from './wire';

export interface TemplateServiceOptions {
  /** The platform's Redis; everything goes under `keyPrefix`. */
  redis: Redis;
  executor: StepExecutor;
  baseImages: BaseImages;
  /** Layers, uploads and scratch space live under this directory. */
  dataDir: string;
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
  /** Resources of a template created without cpuCount/memoryMB. */
  defaultCpuCount?: number;
  defaultMemoryMB?: number;
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
  private readonly filesDir: string;
  /** Builds being checked by starting them: resolvable by build ID until the check ends. */
  private readonly checking = new Map<string, TemplateForSandbox>();

  constructor(private readonly o: TemplateServiceOptions) {
    this.store = new TemplateStore(o.redis, o.keyPrefix ?? DEFAULT_KEY_PREFIX);
    this.secret = o.uploadSecret ?? randomBytes(32);
    this.filesDir = join(o.dataDir, 'files');
    const scratchDir = join(o.dataDir, 'scratch');
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
      layersDir: join(o.dataDir, 'layers'),
      scratchDir,
      stepTimeoutMs: o.stepTimeoutMs ?? 20 * 60_000,
      readyTimeoutMs: o.readyTimeoutMs ?? 60_000,
    });
  }

  resolver(): TemplateResolver {
    return {
      resolve: (idOrAlias) => this.resolve(idOrAlias),
      names: async () =>
        (await this.store.listTemplates()).filter((t) => t.readyBuildID !== undefined).flatMap((t) => [t.templateID, ...t.names]),
    };
  }

  async requestBuild(body: CreateTemplateBody & { name: string }): Promise<RequestBuildResult> {
    const { name, tag } = splitNameTag(body.name);
    const now = new Date().toISOString();
    let template = await this.store.findTemplate(name);
    if (!template) {
      template = {
        templateID: newTemplateID(),
        names: [name],
        cpuCount: body.cpuCount ?? this.o.defaultCpuCount ?? 2,
        memoryMB: body.memoryMB ?? this.o.defaultMemoryMB ?? 1024,
        createdAt: now,
        updatedAt: now,
        buildCount: 0,
      };
    }
    template.buildCount += 1;
    template.updatedAt = now;
    await this.store.putTemplate(template);
    const tags = [...(tag ? [tag] : []), ...(body.tags ?? [])];
    const build: BuildRecord = {
      buildID: newBuildID(),
      templateID: template.templateID,
      status: 'waiting',
      createdAt: now,
      updatedAt: now,
      cpuCount: body.cpuCount ?? template.cpuCount,
      memoryMB: body.memoryMB ?? template.memoryMB,
      tags: tags.length > 0 ? tags : ['default'],
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
      public: false,
    };
  }

  private async template(templateID: string): Promise<TemplateRecord> {
    const t = await this.store.getTemplate(templateID);
    if (!t) throw new ApiError(404, `template ${JSON.stringify(templateID)} not found; create it with POST /v3/templates (Template.build)`);
    return t;
  }

  private async build(templateID: string, buildID: string): Promise<BuildRecord> {
    await this.template(templateID);
    const b = await this.store.getBuild(buildID);
    if (!b || b.templateID !== templateID) throw new ApiError(404, `build ${JSON.stringify(buildID)} of template ${templateID} not found`);
    return b;
  }

  async fileUploadLink(templateID: string, hash: string, req: ApiRequest): Promise<{ present: boolean; url?: string }> {
    await this.template(templateID);
    if (!HASH.test(hash)) throw new ApiError(400, `files hash: expected 64 hex digits (given: ${JSON.stringify(hash)})`);
    const stored = await this.store.filePath(hash);
    const present = stored !== undefined && existsSync(stored);
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
    try {
      const path = await saveUpload(this.filesDir, hash, req.raw);
      await this.store.putFile(hash, path);
    } catch (err) {
      if (err instanceof TooLargeError) throw new ApiError(413, `upload refused: ${err.message}`);
      throw err;
    }
  }

  async startBuild(templateID: string, buildID: string, body: StartBuildBody): Promise<void> {
    const build = await this.build(templateID, buildID);
    const planned = planBuild(body, this.o.baseImages.supported);
    if (!planned.ok) {
      const message = planned.problems.map((p) => p.message).join('; ');
      if (build.status === 'waiting') await this.fail(build, { message, step: planned.problems[0]!.step });
      throw new ApiError(400, message);
    }
    if (build.status !== 'waiting')
      throw new ApiError(
        409,
        `build ${buildID} of template ${templateID} was already started (status ${build.status}); request a new build with POST /v3/templates`,
      );
    if (!(await this.store.claimRunning(templateID, buildID))) {
      const other = await this.store.runningBuild(templateID);
      const message = `template ${templateID} already has a build running (${other}); wait for it to finish, then build again`;
      await this.fail(build, { message });
      throw new ApiError(409, message);
    }
    const job = this.runner.run(build, body, planned.plan).finally(() => this.running.delete(job));
    this.running.add(job);
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

  async buildStatus(templateID: string, buildID: string, offset: number, limit: number): Promise<BuildStatusResult> {
    const build = await this.build(templateID, buildID);
    const logEntries = await this.store.logs(buildID, offset, limit);
    return { templateID, buildID, status: build.status, logs: [], logEntries, ...(build.reason ? { reason: build.reason } : {}) };
  }

  async list(): Promise<ListedTemplate[]> {
    const templates = await this.store.listTemplates();
    const listed: ListedTemplate[] = [];
    for (const t of templates) {
      const ready = t.readyBuildID ? await this.store.getBuild(t.readyBuildID) : undefined;
      listed.push({
        templateID: t.templateID,
        buildID: ready?.buildID ?? '',
        cpuCount: ready?.cpuCount ?? t.cpuCount,
        memoryMB: ready?.memoryMB ?? t.memoryMB,
        diskSizeMB: 0,
        public: false,
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

  async aliasInfo(alias: string): Promise<{ templateID: string; public: boolean }> {
    const id = await this.store.templateIDByName(splitNameTag(alias).name);
    if (id === undefined) throw new ApiError(404, `no template has the alias ${JSON.stringify(alias)}`);
    return { templateID: id, public: false };
  }

  async delete(templateID: string): Promise<void> {
    const t = await this.template(templateID);
    if (await this.store.runningBuild(templateID))
      throw new ApiError(409, `template ${templateID} has a build running; delete it when the build has finished`);
    await this.store.deleteTemplate(t);
  }

  async resolve(idOrAlias: string): Promise<TemplateForSandbox | undefined> {
    const checking = this.checking.get(idOrAlias);
    if (checking) return checking;
    const t = await this.store.findTemplate(idOrAlias);
    if (!t?.readyBuildID) return undefined;
    const b = await this.store.getBuild(t.readyBuildID);
    if (b?.status !== 'ready') return undefined;
    return {
      templateID: t.templateID,
      alias: t.names[0],
      buildID: b.buildID,
      layers: b.layers,
      memoryMB: b.memoryMB,
      cpuCount: b.cpuCount,
      ...(b.startCmd ? { startCmd: b.startCmd } : {}),
      ...(b.readyCmd ? { readyCmd: b.readyCmd } : {}),
      envs: b.envs,
      user: b.user,
      ...(b.workdir ? { workdir: b.workdir } : {}),
    };
  }

  /** Builds a crashed platform left `building` can never finish: mark them failed and free their templates. */
  async recover(): Promise<number> {
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

  /** Waits for the builds this instance runs. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}

/** A template service whose builds a stopped platform left running are marked failed first (recover). */
export async function createTemplateService(o: TemplateServiceOptions): Promise<TemplateService> {
  const service = new TemplateService(o);
  await service.recover();
  return service;
}
