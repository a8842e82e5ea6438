/**
 * Executes one template build: the base root filesystem, then each step in a one-shot container over the layers so
 * far (RUN, COPY) or as metadata (ENV, WORKDIR, USER), then the start/ready check. Every output line is appended to the
 * build's log as it comes. A layer whose inputs did not change is reused. A failing step fails the build with the step
 * and its last lines; its layer is removed and the template keeps its previous ready build (or none).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_USER } from '../../runtime/base-images';
import type { BaseImages, StepExecutor } from '../../runtime/types';
import type { TemplateForSandbox } from '../sandboxes/template-resolver';
import { baseKey, stepKey } from './cache-key';
import { COPY_CONTEXT_MOUNT, renderCopyScript } from './copy-script';
import { extractUpload } from './files';
import { homeOf, pathExists, userExists, userNameOf } from './layers';
import { insideTree } from '../../runtime/layer-view';
import { pullImage } from '../../runtime/images/pull';
import type { DiskAdmission } from '../../runtime/admission';
import { type BuildBase, type BuildPlan, describeStep, expandEnv, type PlannedStep } from './plan';
import { shellQuote } from '../../util/shell-quote';
import { PathHolds, type Release } from '../../util/path-holds';
import type { BuildRecord, TemplateStore } from './store';
import { resolveRef } from './tags';
import { BuildLog } from './build-log';
import { TIMED_OUT_EXIT_CODE } from '../../runtime/step-executor';
import type { TemplateValidator } from './validate';
import { teamOf } from '../teams/model';
import type { BuildLimits } from '../../config';
import { BASE_STEP, FINALIZE_STEP, type StartBuildBody, type Step } from './wire';

export interface BuildRunnerOptions {
  store: TemplateStore;
  executor: StepExecutor;
  baseImages: BaseImages;
  validator: TemplateValidator;
  /** Layers live here, one directory each. */
  layersDir: string;
  /** Images pulled from registries: their blobs and unpacked layers (runtime/images/pull.ts), shared by every build. */
  imagesDir: string;
  /** Registries allowed over plain HTTP besides loopback ones. */
  insecureRegistries: readonly string[];
  /** The data root's disk check: a pull may take at most the room it leaves (runtime/images/pull.ts, `disk`). */
  diskAdmission?: DiskAdmission;
  /** Scratch space: extracted COPY contexts, throwaway layers. */
  scratchDir: string;
  /** Every layer a build uses is held here until the build's record names it (the storage collector leaves it). */
  holds?: PathHolds;
  stepTimeoutMs: number;
  readyTimeoutMs: number;
  /** The whole build's deadline, its log's caps (builds.deadlineSeconds, builds.logLineBytes, builds.logBytes). */
  limits: Pick<BuildLimits, 'deadlineSeconds' | 'logLineBytes' | 'logBytes'>;
  /** How many of a failing step's last lines the error reason carries. */
  reasonLines?: number;
  /** Told when a build ends, ready or failed, and how long it ran (the Prometheus build metrics). */
  onFinished?(outcome: 'ready' | 'error', seconds: number): void;
  /** Layers a template asks for by a file in it, added above its steps' (TemplateServiceOptions.preinstall). */
  preinstall?: TemplatePreinstall;
}

/**
 * The layers a build adds above its steps' because the template's files ask for them (the MCP gateway template's
 * image servers: platform/sandboxes/mcp-images.ts), pulled into `imagesDir`; [] when it asks for none. A rejection
 * fails the build with its message.
 */
export type TemplatePreinstall = (layers: readonly string[], io: { imagesDir: string; onLine(line: string): void }) => Promise<string[]>;

/** A Debian template starts as the base image's user in its home, as E2B's templates do. */
const DEFAULT_WORKDIR = DEFAULT_USER.home;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Makes the base usable for E2B templates: bash, `ss` for waitForPort, and the default user with a home. */
const PROVISION_SCRIPT = `set -eu
if ! command -v ss >/dev/null 2>&1; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iproute2 && apt-get clean && rm -rf /var/lib/apt/lists/*
fi
id -u ${DEFAULT_USER.name} >/dev/null 2>&1 || useradd -m -s /bin/bash ${DEFAULT_USER.name}
mkdir -p ${DEFAULT_WORKDIR} && chown ${DEFAULT_USER.name}: ${DEFAULT_WORKDIR}
`;

/** E2B's default user in an image that has none: with useradd (Debian, Ubuntu, Fedora) or busybox's adduser. */
const IMAGE_PROVISION_SCRIPT = `set -eu
if ! id -u ${DEFAULT_USER.name} >/dev/null 2>&1; then
  if command -v useradd >/dev/null 2>&1; then useradd -m -s "$(command -v bash || echo /bin/sh)" ${DEFAULT_USER.name}
  elif command -v adduser >/dev/null 2>&1; then adduser -D ${DEFAULT_USER.name}
  fi
fi
`;

class StepFailed extends Error {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

interface State {
  /** Topmost first; the last is the base. */
  layers: string[];
  key: string;
  envs: Record<string, string>;
  user: string;
  workdir: string;
  /** Once a step is rebuilt, every later one is too: its parent changed. */
  cacheBroken: boolean;
}

/** One run of a build: what every phase of it works on. */
interface BuildRun {
  build: BuildRecord;
  log: BuildLog;
  /** The uploads' sha256 as the service checked them, by files hash. */
  uploads: ReadonlyMap<string, string>;
  /** When the whole build must be done (performance.now() time). */
  deadline: number;
  /** Holds on the layers (and the image store) it uses, released once its record names them. */
  held: Release[];
}

/** What every step handler works on: the build, the state the steps so far left, and where its lines go. */
interface StepContext extends BuildRun {
  state: State;
  /** The step's name in the log: '1'..'n', or BASE_STEP. */
  name: string;
  /** Rebuild even when the layer is cached (the build's or the step's force). */
  force: boolean;
}

/** One step that makes a layer. */
interface LayerRun {
  /** What the log says the step does. */
  label: string;
  /** What identifies the step in the layer cache, under its parent's key. */
  cacheAs: Pick<Step, 'type' | 'args' | 'filesHash'>;
  argv: string[];
  user: string;
  /** Mounts made just before the run (COPY's unpacked files); their mount points are removed from the layer after. */
  mounts?: () => Promise<Array<{ source: string; target: string; adopt?: boolean }>>;
}

type StepHandlers = { [K in PlannedStep['kind']]: (ctx: StepContext, step: Extract<PlannedStep, { kind: K }>) => Promise<void> };

export class BuildRunner {
  private readonly holds: PathHolds;

  constructor(private readonly o: BuildRunnerOptions) {
    this.holds = o.holds ?? new PathHolds();
  }

  /** Holds `paths` for the build if they all still exist (false: the collector removed one, look again). */
  private async claim(run: BuildRun, paths: readonly string[]): Promise<boolean> {
    const release = await this.holds.claim(paths);
    if (release) run.held.push(release);
    return release !== undefined;
  }

  /** Runs a planned build to its end; never rejects (every failure is recorded on the build). */
  /** `uploads`: the sha256 of each files hash's upload as the service checked it; its COPY uses exactly those bytes. */
  async run(build: BuildRecord, body: StartBuildBody, plan: BuildPlan, uploads: ReadonlyMap<string, string> = new Map()): Promise<void> {
    const log = new BuildLog(this.o.store, build.buildID, { lineBytes: this.o.limits.logLineBytes, totalBytes: this.o.limits.logBytes });
    const started = performance.now();
    const deadline = started + this.o.limits.deadlineSeconds * 1000;
    const finished = (outcome: 'ready' | 'error') => this.o.onFinished?.(outcome, (performance.now() - started) / 1000);
    const held: Release[] = [];
    try {
      build.status = 'building';
      build.updatedAt = new Date().toISOString();
      await this.o.store.putBuild(build);
      const result = await this.execute({ build, log, uploads, deadline, held }, body, plan);
      await log.flush();
      Object.assign(build, result, { status: 'ready', updatedAt: new Date().toISOString() });
      await this.o.store.putBuild(build);
      // The build's tags move to it at once: a create from one of them gets this build from now on.
      await this.o.store.setTags(build.templateID, build.tags, build.buildID, build.updatedAt);
      const template = await this.o.store.getTemplate(build.templateID);
      if (template) {
        template.readyBuildID = build.buildID;
        template.updatedAt = build.updatedAt;
        await this.o.store.putTemplate(template);
      }
      finished('ready');
    } catch (err) {
      const step = err instanceof StepFailed ? err.step : undefined;
      const message = (err as Error).message;
      log.write('error', `Build failed: ${message}`, step);
      await log.flush();
      const stepLines = step === undefined ? [] : log.lastOf(step, this.o.reasonLines ?? 20);
      build.status = 'error';
      build.reason = { message, step, logEntries: stepLines };
      build.updatedAt = new Date().toISOString();
      await this.o.store.putBuild(build);
      finished('error');
    } finally {
      await this.o.store.releaseRunning(build.templateID, build.buildID);
      // Its record (ready: and its tags) now names the layers it keeps; a failed build keeps none.
      for (const release of held) release();
    }
  }

  private async execute(run: BuildRun, body: StartBuildBody, plan: BuildPlan): Promise<Partial<BuildRecord>> {
    const { build, log } = run;
    const state = await this.base(run, plan.base, body.force);
    const total = plan.steps.length;
    for (const [i, step] of plan.steps.entries()) {
      const name = String(i + 1);
      log.write('info', `[${name}/${total}] ${describeStep(step.step)}`, name);
      const ctx: StepContext = { ...run, state, name, force: body.force || step.step.force };
      await (this.handlers[step.kind] as (ctx: StepContext, step: PlannedStep) => Promise<void>)(ctx, step);
    }
    if (this.o.preinstall) {
      // It pulls into the image store: held whole while it runs, as a base image's pull is.
      await mkdir(this.o.imagesDir, { recursive: true, mode: 0o700 });
      const store = await this.holds.claim([this.o.imagesDir]);
      const extra = await this.o
        .preinstall(state.layers, { imagesDir: this.o.imagesDir, onLine: (line) => log.output('info', line, FINALIZE_STEP) })
        .then(async (layers) => {
          if (!(await this.claim(run, layers))) throw new Error('the preinstalled layers were removed while they were made; build again');
          return layers;
        })
        .catch((err: Error) => {
          throw new StepFailed(FINALIZE_STEP, err.message);
        })
        .finally(() => store?.());
      state.layers = [...extra, ...state.layers];
    }

    const template: TemplateForSandbox = {
      templateID: build.templateID,
      buildID: build.buildID,
      layers: state.layers,
      memoryMB: build.memoryMB,
      cpuCount: build.cpuCount,
      startCmd: body.startCmd,
      readyCmd: body.readyCmd,
      envs: state.envs,
      user: state.user,
      workdir: state.workdir,
    };
    if (body.startCmd || body.readyCmd) {
      log.write(
        'info',
        `Starting the template: ${body.startCmd ?? '(no start command)'}; waiting for: ${body.readyCmd ?? '(nothing)'}`,
        FINALIZE_STEP,
      );
      const left = this.timeLeft(run, FINALIZE_STEP, 'the start check');
      const result = await this.o.validator.validate(template, {
        timeoutMs: Math.min(this.o.readyTimeoutMs, left),
        onLine: (line) => log.output('info', line, FINALIZE_STEP),
      });
      if (!result.ok) {
        if (performance.now() >= run.deadline) throw this.pastDeadline(FINALIZE_STEP, 'the start check');
        throw new StepFailed(FINALIZE_STEP, result.message);
      }
    }
    log.write(
      'info',
      `Template ${build.templateID} build ${build.buildID} is ready (${state.layers.length - 1} layers over ${body.fromImage ?? body.fromTemplate})`,
      FINALIZE_STEP,
    );
    return {
      layers: state.layers,
      envs: state.envs,
      user: state.user,
      workdir: state.workdir,
      startCmd: body.startCmd,
      readyCmd: body.readyCmd,
      fromImage: body.fromImage,
      steps: body.steps as Step[],
    };
  }

  private async base(run: BuildRun, base: BuildBase, force: boolean): Promise<State> {
    const { build, log } = run;
    if (base.kind === 'template') {
      // Held as found; when the collector took its layers first (the template was deleted), it is looked up again.
      let ready: BuildRecord | undefined;
      for (let tries = 0; tries < 3 && !ready; tries++) {
        const found = (await resolveRef(this.o.store, teamOf(build), base.name))?.build;
        if (!found) break;
        if (await this.claim(run, found.layers)) ready = found;
      }
      if (!ready) throw new StepFailed(BASE_STEP, `base template ${JSON.stringify(base.name)} does not exist or has no ready build`);
      log.write('info', `FROM template ${base.name} (build ${ready.buildID})`, BASE_STEP);
      return {
        layers: ready.layers,
        key: `template:${ready.buildID}`,
        envs: { ...ready.envs },
        user: ready.user,
        workdir: ready.workdir ?? DEFAULT_WORKDIR,
        cacheBroken: force,
      };
    }
    if (base.kind === 'registry') return this.registryBase(run, base, force);
    log.write('info', `FROM ${base.image}`, BASE_STEP);
    const rootfs = await this.o.baseImages
      .rootfs(base.image, (line) => log.output('info', line, BASE_STEP))
      .catch((err: Error) => {
        throw new StepFailed(BASE_STEP, `the base root filesystem for ${base.image} could not be made: ${err.message}`);
      });
    const state: State = {
      layers: [rootfs],
      key: baseKey(base.image, rootfs, teamOf(build)),
      envs: { PATH: DEFAULT_PATH },
      user: 'root',
      workdir: '/',
      cacheBroken: force,
    };
    await this.layer(
      { ...run, state, name: BASE_STEP, force: false },
      {
        label: 'provision',
        cacheAs: { type: 'RUN', args: [PROVISION_SCRIPT, 'root'] },
        argv: ['/bin/sh', '-c', PROVISION_SCRIPT],
        user: 'root',
      },
    );
    state.user = DEFAULT_USER.name;
    state.workdir = DEFAULT_WORKDIR;
    return state;
  }

  /**
   * An image from a registry: its layers as pulled (shared with every other build and image that has them), its
   * Env, WorkingDir and User. E2B's default user is added when the image lacks one and can add users, so code written
   * for E2B's templates finds it; a USER or WORKDIR of the image still decides where a sandbox starts.
   */
  private async registryBase(run: BuildRun, base: Extract<BuildBase, { kind: 'registry' }>, force: boolean): Promise<State> {
    const { build, log } = run;
    log.write('info', `FROM ${base.image}`, BASE_STEP);
    // The whole image store is held while the pull runs (it reuses layers it finds there), then the image's layers.
    await mkdir(this.o.imagesDir, { recursive: true, mode: 0o700 });
    const store = await this.holds.claim([this.o.imagesDir]);
    const pulled = await pullImage(base.image, {
      storeDir: this.o.imagesDir,
      ...(base.credentials ? { credentials: base.credentials } : {}),
      insecureRegistries: this.o.insecureRegistries,
      ...(this.o.diskAdmission ? { disk: this.o.diskAdmission } : {}),
      onLine: (line) => log.output('info', line, BASE_STEP),
      timeoutMs: Math.min(this.o.stepTimeoutMs, this.timeLeft(run, BASE_STEP, `pull ${base.image}`)),
    })
      .then(async (image) => {
        if (!(await this.claim(run, image.layers)))
          throw new Error(`the layers of ${base.image} were removed while it was pulled; build again`);
        return image;
      })
      .catch((err: Error) => {
        throw new StepFailed(BASE_STEP, err.message);
      })
      .finally(() => store?.());
    const { config } = pulled;
    const state: State = {
      layers: pulled.layers,
      key: baseKey(`${pulled.reference}@${pulled.digest}`, pulled.digest, teamOf(build)),
      envs: { PATH: DEFAULT_PATH, ...config.env },
      user: 'root',
      workdir: '/',
      cacheBroken: force,
    };
    if (await pathExists(state.layers, 'bin/sh')) {
      await this.layer(
        { ...run, state, name: BASE_STEP, force: false },
        {
          label: 'add the default user',
          cacheAs: { type: 'RUN', args: [IMAGE_PROVISION_SCRIPT, 'root'] },
          argv: ['/bin/sh', '-c', IMAGE_PROVISION_SCRIPT],
          user: 'root',
        },
      );
    }
    const imageUser = config.user === undefined ? undefined : await userNameOf(state.layers, config.user);
    state.user = imageUser ?? ((await userExists(state.layers, DEFAULT_USER.name)) ? DEFAULT_USER.name : 'root');
    state.workdir = config.workingDir ?? (await homeOf(state.layers, state.user)) ?? '/';
    log.write('info', `image user ${state.user}, working directory ${state.workdir}`, BASE_STEP);
    return state;
  }

  /** One handler per step kind; ENV and an existing USER or WORKDIR change only the state, the others make a layer. */
  private readonly handlers: StepHandlers = {
    ENV: async ({ state }, p) => {
      for (const [k, v] of p.pairs) state.envs[k] = expandEnv(v, state.envs);
      state.key = stepKey(state.key, p.step);
    },
    USER: async (ctx, p) => {
      ctx.state.key = stepKey(ctx.state.key, p.step);
      if (!(await userExists(ctx.state.layers, p.user))) {
        const script = `useradd -m -s /bin/bash ${p.user}`;
        await this.layer(ctx, {
          label: `useradd ${p.user}`,
          cacheAs: { type: 'RUN', args: [script, 'root'] },
          argv: ['/bin/bash', '-c', script],
          user: 'root',
        });
      }
      ctx.state.user = p.user;
    },
    WORKDIR: async (ctx, p) => {
      const { state } = ctx;
      const path = p.path.startsWith('/') ? p.path : `${state.workdir.replace(/\/$/, '')}/${p.path}`;
      state.key = stepKey(state.key, p.step);
      if (!(await pathExists(state.layers, path))) {
        const script = `mkdir -p ${shellQuote(path)} && chown ${shellQuote(state.user)}: ${shellQuote(path)}`;
        await this.layer(ctx, {
          label: `mkdir ${path}`,
          cacheAs: { type: 'RUN', args: [script, 'root'] },
          argv: ['/bin/bash', '-c', script],
          user: 'root',
        });
      }
      state.workdir = path;
    },
    RUN: async (ctx, p) => {
      await this.layer(ctx, {
        label: describeStep(p.step),
        cacheAs: p.step,
        argv: ['/bin/bash', '-c', p.command],
        user: p.user ?? ctx.state.user,
      });
    },
    COPY: async (ctx, p) => {
      const file = await this.o.store.getFile(teamOf(ctx.build), p.filesHash);
      const archive = file?.path;
      if (!archive)
        throw new StepFailed(ctx.name, `step ${ctx.name} (${describeStep(p.step)}): no files were uploaded for files hash ${p.filesHash}`);
      const sha256 = ctx.uploads.get(p.filesHash) ?? file.sha256;
      const { state } = ctx;
      const script = renderCopyScript({ src: p.src, dest: p.dest, workdir: state.workdir, owner: p.owner ?? state.user, mode: p.mode });
      let context: string | undefined;
      try {
        await this.layer(ctx, {
          label: describeStep(p.step),
          // Cached by the bytes received, not only by the hash the client named them with.
          cacheAs: { ...p.step, filesHash: `${p.filesHash}:${sha256}` },
          argv: ['/bin/bash', '-c', script],
          user: 'root',
          mounts: async () => {
            context = await extractUpload(archive, this.o.scratchDir, sha256);
            return [{ source: context, target: COPY_CONTEXT_MOUNT, adopt: true }];
          },
        });
      } finally {
        if (context) await rm(context, { recursive: true, force: true });
      }
    },
  };

  /** Milliseconds the build has left before its deadline; past it, the step fails naming the limit. */
  private timeLeft(run: BuildRun, step: string, label: string): number {
    const left = Math.floor(run.deadline - performance.now());
    if (left <= 0) throw this.pastDeadline(step, label);
    return left;
  }

  private pastDeadline(step: string, label: string): StepFailed {
    return new StepFailed(
      step,
      `the build ran past its deadline of ${this.o.limits.deadlineSeconds} s (builds.deadlineSeconds); step ${step} (${label}) was stopped`,
    );
  }

  /**
   * One step that makes a layer: reused from the cache when its key is known and nothing forces a rebuild, else run
   * in a one-shot container into a new layer directory (removed again if the step fails).
   */
  private async layer(ctx: StepContext, run: LayerRun): Promise<void> {
    const { build, state, log, name, force } = ctx;
    const key = stepKey(state.key, run.cacheAs);
    if (!force && !state.cacheBroken) {
      const cached = await this.o.store.getLayer(key);
      if (cached && (await this.claim(ctx, [cached.dir]))) {
        log.write('info', `CACHED ${run.label}`, name);
        state.layers = [cached.dir, ...state.layers];
        state.key = key;
        return;
      }
    }
    state.cacheBroken = true;
    const layerDir = join(this.o.layersDir, `${key.slice(0, 24)}-${randomBytes(4).toString('hex')}`);
    ctx.held.push(this.holds.hold([layerDir]));
    await mkdir(layerDir, { recursive: true, mode: 0o755 });
    const user = run.user;
    let mounts: Array<{ source: string; target: string; adopt?: boolean }> = [];
    let code: number;
    let boundByDeadline = false;
    let diskFull: { mb: number; cut: boolean } | undefined;
    try {
      mounts = run.mounts ? await run.mounts() : [];
      const home = (await homeOf(state.layers, user)) ?? (user === 'root' ? '/root' : `/home/${user}`);
      const left = this.timeLeft(ctx, name, run.label);
      boundByDeadline = left < this.o.stepTimeoutMs;
      code = await this.o.executor.run({
        layers: state.layers,
        layerDir,
        argv: run.argv,
        user,
        workdir: state.workdir,
        env: { HOME: home, USER: user, ...state.envs },
        binds: mounts,
        network: 'egress',
        memoryMB: build.memoryMB,
        cpuCount: build.cpuCount,
        timeoutMs: Math.min(this.o.stepTimeoutMs, left),
        maxLineBytes: this.o.limits.logLineBytes,
        onLine: (stream, line, cut) => log.output(stream === 'stderr' ? 'warn' : 'info', line, name, cut),
        onDiskFull: (mb, cut) => (diskFull = { mb, cut }),
      });
    } catch (err) {
      await rm(layerDir, { recursive: true, force: true });
      if (err instanceof StepFailed) throw err;
      throw new StepFailed(name, `step ${name} (${run.label}) could not be run: ${(err as Error).message}`);
    }
    if (code !== 0) {
      await rm(layerDir, { recursive: true, force: true });
      if (code === TIMED_OUT_EXIT_CODE && boundByDeadline && performance.now() >= ctx.deadline) throw this.pastDeadline(name, run.label);
      await log.flush();
      const tail = log.lastOf(name, 6).map((e) => e.message);
      const why =
        diskFull !== undefined
          ? `ran out of disk: ${
              diskFull.cut
                ? `this step got ${diskFull.mb} MB, the room left on the data root (limits.diskOvercommit; builds.stepDiskMB is more)`
                : `a build step may write ${diskFull.mb} MB (builds.stepDiskMB)`
            }; it exited with code ${code}`
          : `failed with exit code ${code}`;
      throw new StepFailed(name, `step ${name} (${run.label}) ${why}${tail.length > 0 ? `; last output:\n${tail.join('\n')}` : ''}`);
    }
    // Mount targets were created in the layer as mount points; they are not part of the template.
    for (const m of mounts)
      if (insideTree(layerDir, m.target)) await rm(join(layerDir, m.target), { recursive: true, force: true }).catch(() => undefined);
    await this.o.store.putLayer(key, { dir: layerDir, createdAt: new Date().toISOString() });
    state.layers = [layerDir, ...state.layers];
    state.key = key;
  }
}
