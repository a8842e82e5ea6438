/**
 * Executes one template build: the base root filesystem, then each step in a one-shot container over the layers so
 * far (RUN, COPY) or as metadata (ENV, WORKDIR, USER), then the start/ready check. Every output line is appended to the
 * build's log as it comes. A layer whose inputs did not change is reused. A failing step fails the build with the step
 * and its last lines; its layer is removed and the template keeps its previous ready build (or none).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BaseImages, StepExecutor } from '../../runtime/types';
import type { TemplateForSandbox } from '../sandboxes/template-resolver';
import { baseKey, stepKey } from './cache-key';
import { COPY_CONTEXT_MOUNT, renderCopyScript } from './copy-script';
import { extractArchive } from './files';
import { homeOf, pathExists, userExists } from './layers';
import { debianImage, describeStep, expandEnv, planSteps, type PlannedStep } from './plan';
import { shellQuote } from '../../util/shell-quote';
import type { BuildRecord, TemplateStore } from './store';
import type { TemplateValidator } from './validate';
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
}

/** The user and directory a Debian template starts with, as E2B's templates do. */
export const DEFAULT_USER = 'user';
export const DEFAULT_WORKDIR = '/home/user';
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Makes the base usable for E2B templates: bash, `ss` for waitForPort, and the default user with a home. */
const PROVISION_SCRIPT = `set -eu
if ! command -v ss >/dev/null 2>&1; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iproute2 && apt-get clean && rm -rf /var/lib/apt/lists/*
fi
id -u ${DEFAULT_USER} >/dev/null 2>&1 || useradd -m -s /bin/bash ${DEFAULT_USER}
mkdir -p ${DEFAULT_WORKDIR} && chown ${DEFAULT_USER}: ${DEFAULT_WORKDIR}
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

export class BuildRunner {
  constructor(private readonly o: BuildRunnerOptions) {}

  /** Runs the build to its end; never rejects (every failure is recorded on the build). */
  async run(build: BuildRecord, body: StartBuildBody): Promise<void> {
    const log = new BuildLog(this.o.store, build.buildID);
    try {
      build.status = 'building';
      build.updatedAt = new Date().toISOString();
      await this.o.store.putBuild(build);
      const result = await this.execute(build, body, log);
      await log.flush();
      Object.assign(build, result, { status: 'ready', updatedAt: new Date().toISOString() });
      await this.o.store.putBuild(build);
      const template = await this.o.store.getTemplate(build.templateID);
      if (template) {
        template.readyBuildID = build.buildID;
        template.updatedAt = build.updatedAt;
        await this.o.store.putTemplate(template);
      }
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
    } finally {
      await this.o.store.releaseRunning(build.templateID, build.buildID);
    }
  }

  private async execute(build: BuildRecord, body: StartBuildBody, log: BuildLog): Promise<Partial<BuildRecord>> {
    const planned = planSteps(body.steps as Step[]);
    if (!planned.ok) throw new StepFailed(planned.problems[0]!.step, planned.problems.map((p) => p.message).join('; '));

    const state = await this.base(build, body, log);
    const total = planned.plan.length;
    for (const [i, step] of planned.plan.entries()) {
      const name = String(i + 1);
      log.write('info', `[${name}/${total}] ${describeStep(step.step)}`, name);
      await this.step(build, step, name, state, body.force, log);
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

  private async base(build: BuildRecord, body: StartBuildBody, log: BuildLog): Promise<State> {
    if (body.fromTemplate !== undefined) {
      const parent = await this.o.store.findTemplate(body.fromTemplate);
      const ready = parent?.readyBuildID ? await this.o.store.getBuild(parent.readyBuildID) : undefined;
      if (!ready)
        throw new StepFailed(BASE_STEP, `base template ${JSON.stringify(body.fromTemplate)} does not exist or has no ready build`);
      log.write('info', `FROM template ${body.fromTemplate} (build ${ready.buildID})`, BASE_STEP);
      return {
        layers: ready.layers,
        key: `template:${ready.buildID}`,
        envs: { ...ready.envs },
        user: ready.user,
        workdir: ready.workdir ?? DEFAULT_WORKDIR,
        cacheBroken: body.force,
      };
    }
    const image = debianImage(body.fromImage ?? 'e2bdev/base', this.o.baseImages.supported);
    if (!image.ok) throw new StepFailed(BASE_STEP, image.message);
    log.write('info', `FROM ${image.image}`, BASE_STEP);
    const rootfs = await this.o.baseImages
      .rootfs(image.image, (line) => log.write('info', line, BASE_STEP))
      .catch((err: Error) => {
        throw new StepFailed(BASE_STEP, `the base root filesystem for ${image.image} could not be made: ${err.message}`);
      });
    const state: State = {
      layers: [rootfs],
      key: baseKey(image.image, rootfs),
      envs: { PATH: DEFAULT_PATH },
      user: 'root',
      workdir: '/',
      cacheBroken: body.force,
    };
    await this.layerStep(
      build,
      state,
      BASE_STEP,
      'provision',
      { type: 'RUN', args: [PROVISION_SCRIPT, 'root'] },
      ['/bin/sh', '-c', PROVISION_SCRIPT],
      log,
      false,
      [],
    );
    state.user = DEFAULT_USER;
    state.workdir = DEFAULT_WORKDIR;
    return state;
  }

  private async step(build: BuildRecord, p: PlannedStep, name: string, state: State, buildForce: boolean, log: BuildLog): Promise<void> {
    const force = buildForce || p.step.force;
    switch (p.kind) {
      case 'ENV':
        for (const [k, v] of p.pairs) state.envs[k] = expandEnv(v, state.envs);
        state.key = stepKey(state.key, p.step);
        return;
      case 'USER': {
        state.key = stepKey(state.key, p.step);
        if (!(await userExists(state.layers, p.user))) {
          const script = `useradd -m -s /bin/bash ${p.user}`;
          await this.layerStep(
            build,
            state,
            name,
            `useradd ${p.user}`,
            { type: 'RUN', args: [script, 'root'] },
            ['/bin/bash', '-c', script],
            log,
            force,
            [],
            'root',
          );
        }
        state.user = p.user;
        return;
      }
      case 'WORKDIR': {
        const path = p.path.startsWith('/') ? p.path : `${state.workdir.replace(/\/$/, '')}/${p.path}`;
        state.key = stepKey(state.key, p.step);
        if (!(await pathExists(state.layers, path))) {
          const script = `mkdir -p ${shellQuote(path)} && chown ${shellQuote(state.user)}: ${shellQuote(path)}`;
          await this.layerStep(
            build,
            state,
            name,
            `mkdir ${path}`,
            { type: 'RUN', args: [script, 'root'] },
            ['/bin/bash', '-c', script],
            log,
            force,
            [],
            'root',
          );
        }
        state.workdir = path;
        return;
      }
      case 'RUN':
        await this.layerStep(
          build,
          state,
          name,
          describeStep(p.step),
          p.step,
          ['/bin/bash', '-c', p.command],
          log,
          force,
          [],
          p.user ?? state.user,
        );
        return;
      case 'COPY': {
        const archive = await this.o.store.filePath(p.filesHash);
        if (!archive)
          throw new StepFailed(name, `step ${name} (${describeStep(p.step)}): no files were uploaded for files hash ${p.filesHash}`);
        const script = renderCopyScript({ src: p.src, dest: p.dest, workdir: state.workdir, owner: p.owner ?? state.user, mode: p.mode });
        let context: string | undefined;
        try {
          await this.layerStep(
            build,
            state,
            name,
            describeStep(p.step),
            p.step,
            ['/bin/bash', '-c', script],
            log,
            force,
            [],
            'root',
            async () => {
              context = await extractArchive(archive, this.o.scratchDir);
              return [{ source: context, target: COPY_CONTEXT_MOUNT }];
            },
          );
        } finally {
          if (context) await rm(context, { recursive: true, force: true });
        }
        return;
      }
    }
  }

  /**
   * One step that makes a layer: reused from the cache when its key is known and nothing forces a rebuild, else run
   * in a one-shot container into a new layer directory (removed again if the step fails).
   */
  private async layerStep(
    build: BuildRecord,
    state: State,
    name: string,
    label: string,
    step: Pick<Step, 'type' | 'args' | 'filesHash'>,
    argv: string[],
    log: BuildLog,
    force: boolean,
    binds: Array<{ source: string; target: string }>,
    user = 'root',
    prepare?: () => Promise<Array<{ source: string; target: string }>>,
  ): Promise<void> {
    const key = stepKey(state.key, step);
    if (!force && !state.cacheBroken) {
      const cached = await this.o.store.getLayer(key);
      if (cached && (await pathExists([cached.dir], '.'))) {
        log.write('info', `CACHED ${label}`, name);
        state.layers = [cached.dir, ...state.layers];
        state.key = key;
        return;
      }
    }
    state.cacheBroken = true;
    const layerDir = join(this.o.layersDir, `${key.slice(0, 24)}-${randomBytes(4).toString('hex')}`);
    await mkdir(layerDir, { recursive: true, mode: 0o755 });
    let code: number;
    try {
      const extraBinds = prepare ? await prepare() : [];
      const home = (await homeOf(state.layers, user)) ?? (user === 'root' ? '/root' : `/home/${user}`);
      code = await this.o.executor.run({
        layers: state.layers,
        layerDir,
        argv,
        user,
        workdir: state.workdir,
        env: { HOME: home, USER: user, ...state.envs },
        binds: [...binds, ...extraBinds],
        network: 'host',
        memoryMB: build.memoryMB,
        cpuCount: build.cpuCount,
        timeoutMs: this.o.stepTimeoutMs,
        onLine: (stream, line) => log.write(stream === 'stderr' ? 'warn' : 'info', line, name),
      });
    } catch (err) {
      await rm(layerDir, { recursive: true, force: true });
      throw new StepFailed(name, `step ${name} (${label}) could not be run: ${(err as Error).message}`);
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
        `step ${name} (${label}) failed with exit code ${code}${tail.length > 0 ? `; last output:\n${tail.join('\n')}` : ''}`,
      );
    }
    // Bind targets were created in the layer as mount points; they are not part of the template.
    for (const b of [...binds, ...(prepare ? [{ target: COPY_CONTEXT_MOUNT }] : [])]) {
      await rm(join(layerDir, b.target), { recursive: true, force: true }).catch(() => undefined);
    }
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
