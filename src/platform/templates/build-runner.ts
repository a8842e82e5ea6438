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
import { extractArchive } from './files';
import { homeOf, pathExists, userExists } from './layers';
import { type BuildBase, type BuildPlan, describeStep, expandEnv, type PlannedStep } from './plan';
import { shellQuote } from '../../util/shell-quote';
import type { BuildRecord, TemplateStore } from './store';
import { resolveRef } from './tags';
import type { TemplateValidator } from './validate';
import { teamOf } from '../teams/model';
import { BASE_STEP, FINALIZE_STEP, type LogEntry, type LogLevel, type StartBuildBody, type Step } from './wire';

export interface BuildRunnerOptions {
  store: TemplateStore;
  executor: StepExecutor;
  baseImages: BaseImages;
  validator: TemplateValidator;
  /** Layers live here, one directory each. */
  layersDir: string;
  /** Scratch space: extracted COPY contexts, throwaway layers. */
  scratchDir: string;
  stepTimeoutMs: number;
  readyTimeoutMs: number;
  /** How many of a failing step's last lines the error reason carries. */
  reasonLines?: number;
  /** Told when a build ends, ready or failed, and how long it ran (the Prometheus build metrics). */
  onFinished?(outcome: 'ready' | 'error', seconds: number): void;
}

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

/** What every step handler works on: the build, the state the steps so far left, and where its lines go. */
interface StepContext {
  build: BuildRecord;
  state: State;
  log: BuildLog;
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
  constructor(private readonly o: BuildRunnerOptions) {}

  /** Runs a planned build to its end; never rejects (every failure is recorded on the build). */
  async run(build: BuildRecord, body: StartBuildBody, plan: BuildPlan): Promise<void> {
    const log = new BuildLog(this.o.store, build.buildID);
    const started = performance.now();
    const finished = (outcome: 'ready' | 'error') => this.o.onFinished?.(outcome, (performance.now() - started) / 1000);
    try {
      build.status = 'building';
      build.updatedAt = new Date().toISOString();
      await this.o.store.putBuild(build);
      const result = await this.execute(build, body, plan, log);
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
      const stepLines = step === undefined ? [] : log.entries.filter((e) => e.step === step);
      build.status = 'error';
      build.reason = { message, step, logEntries: stepLines.slice(-(this.o.reasonLines ?? 20)) };
      build.updatedAt = new Date().toISOString();
      await this.o.store.putBuild(build);
      finished('error');
    } finally {
      await this.o.store.releaseRunning(build.templateID, build.buildID);
    }
  }

  private async execute(build: BuildRecord, body: StartBuildBody, plan: BuildPlan, log: BuildLog): Promise<Partial<BuildRecord>> {
    const state = await this.base(build, plan.base, body.force, log);
    const total = plan.steps.length;
    for (const [i, step] of plan.steps.entries()) {
      const name = String(i + 1);
      log.write('info', `[${name}/${total}] ${describeStep(step.step)}`, name);
      const ctx: StepContext = { build, state, log, name, force: body.force || step.step.force };
      await (this.handlers[step.kind] as (ctx: StepContext, step: PlannedStep) => Promise<void>)(ctx, step);
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
      const result = await this.o.validator.validate(template, {
        timeoutMs: this.o.readyTimeoutMs,
        onLine: (line) => log.write('info', line, FINALIZE_STEP),
      });
      if (!result.ok) throw new StepFailed(FINALIZE_STEP, result.message);
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

  private async base(build: BuildRecord, base: BuildBase, force: boolean, log: BuildLog): Promise<State> {
    if (base.kind === 'template') {
      const ready = (await resolveRef(this.o.store, teamOf(build), base.name))?.build;
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
    log.write('info', `FROM ${base.image}`, BASE_STEP);
    const rootfs = await this.o.baseImages
      .rootfs(base.image, (line) => log.write('info', line, BASE_STEP))
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
      { build, state, log, name: BASE_STEP, force: false },
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
      const { state } = ctx;
      const script = renderCopyScript({ src: p.src, dest: p.dest, workdir: state.workdir, owner: p.owner ?? state.user, mode: p.mode });
      let context: string | undefined;
      try {
        await this.layer(ctx, {
          label: describeStep(p.step),
          // Cached by the bytes received, not only by the hash the client named them with.
          cacheAs: { ...p.step, filesHash: `${p.filesHash}:${file?.sha256}` },
          argv: ['/bin/bash', '-c', script],
          user: 'root',
          mounts: async () => {
            context = await extractArchive(archive, this.o.scratchDir);
            return [{ source: context, target: COPY_CONTEXT_MOUNT, adopt: true }];
          },
        });
      } finally {
        if (context) await rm(context, { recursive: true, force: true });
      }
    },
  };

  /**
   * One step that makes a layer: reused from the cache when its key is known and nothing forces a rebuild, else run
   * in a one-shot container into a new layer directory (removed again if the step fails).
   */
  private async layer({ build, state, log, name, force }: StepContext, run: LayerRun): Promise<void> {
    const key = stepKey(state.key, run.cacheAs);
    if (!force && !state.cacheBroken) {
      const cached = await this.o.store.getLayer(key);
      if (cached && (await pathExists([cached.dir], '.'))) {
        log.write('info', `CACHED ${run.label}`, name);
        state.layers = [cached.dir, ...state.layers];
        state.key = key;
        return;
      }
    }
    state.cacheBroken = true;
    const layerDir = join(this.o.layersDir, `${key.slice(0, 24)}-${randomBytes(4).toString('hex')}`);
    await mkdir(layerDir, { recursive: true, mode: 0o755 });
    const user = run.user;
    let mounts: Array<{ source: string; target: string; adopt?: boolean }> = [];
    let code: number;
    try {
      mounts = run.mounts ? await run.mounts() : [];
      const home = (await homeOf(state.layers, user)) ?? (user === 'root' ? '/root' : `/home/${user}`);
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
        timeoutMs: this.o.stepTimeoutMs,
        onLine: (stream, line) => log.write(stream === 'stderr' ? 'warn' : 'info', line, name),
      });
    } catch (err) {
      await rm(layerDir, { recursive: true, force: true });
      throw new StepFailed(name, `step ${name} (${run.label}) could not be run: ${(err as Error).message}`);
    }
    if (code !== 0) {
      await rm(layerDir, { recursive: true, force: true });
      await log.flush();
      const tail = log.entries
        .filter((e) => e.step === name)
        .slice(-6)
        .map((e) => e.message);
      throw new StepFailed(
        name,
        `step ${name} (${run.label}) failed with exit code ${code}${tail.length > 0 ? `; last output:\n${tail.join('\n')}` : ''}`,
      );
    }
    // Mount targets were created in the layer as mount points; they are not part of the template.
    for (const m of mounts) await rm(join(layerDir, m.target), { recursive: true, force: true }).catch(() => undefined);
    await this.o.store.putLayer(key, { dir: layerDir, createdAt: new Date().toISOString() });
    state.layers = [layerDir, ...state.layers];
    state.key = key;
  }
}

/** The build's log: kept in memory for the reason, appended to Redis in order as lines come. */
class BuildLog {
  readonly entries: LogEntry[] = [];
  private chain: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  constructor(
    private readonly store: TemplateStore,
    private readonly buildID: string,
  ) {}

  write(level: LogLevel, message: string, step?: string): void {
    const entry: LogEntry = { timestamp: new Date().toISOString(), level, message, ...(step === undefined ? {} : { step }) };
    this.entries.push(entry);
    this.chain = this.chain
      .then(() => this.store.appendLog(this.buildID, entry))
      .catch((err: Error) => {
        this.failure ??= err;
      });
  }

  async flush(): Promise<void> {
    await this.chain;
    if (this.failure) throw this.failure;
  }
}
