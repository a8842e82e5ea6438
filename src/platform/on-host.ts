/**
 * The platform on a real host: the OCI runtime (crun, runc or runsc), the sandbox network (the lab's, or a standalone
 * one), Debian base images, the template builder on the same Redis, and the catalog. This is what
 * `sandbox-kit platform` and the local system start; each room is made here and handed to `startPlatform`.
 */
import * as fs from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryCatalog } from '../catalog/memory';
import { RedisCatalog } from '../catalog/redis';
import type { WritableCatalog } from '../catalog/types';
import {
  buildProxyEnv,
  createOciRuntime,
  createStepExecutor,
  DEFAULT_STATE_ROOT,
  MmdebstrapImages,
  openSandboxHostNetwork,
  type RunscPlatform,
  type RuntimeChoice,
  type RuntimeName,
  type SandboxNetwork,
} from '../runtime';
import type { AgentPayload } from '../runtime/agent-payload';
import { DEFAULT_ADMISSION, DiskAdmission, type Resources } from '../runtime/admission';
import { STEPS_DATA_DIR } from '../runtime/instance';
import { LOWER_ALNUM, randomText } from '../util/random-text';
import { useSpawnHelper } from '../util/exec';
import { defaultSpawnHelperProgram } from '../util/spawn-helper';
import {
  startPlatform,
  volumesDirOf,
  type FleetOptions,
  type PlatformContext,
  type PlatformOptions,
  type RunningPlatform,
  type TemplateMount,
} from './index';
import { subnetCapacity } from '../runtime/network/host-network';
import { createTemplateService, sandboxValidator, templateRoutes, type TemplateServiceOptions } from './templates';
import type { ImageSources } from './templates';
import { LOG_PAGE_LIMIT } from './templates/routes';
import { mcpPreinstallFor } from './sandboxes/mcp-images';
import type { BuildLimits, GcSettings } from '../config';
import { OPEN_TEMPLATE_LIMITS } from './templates/limits';
import { DEFAULT_PAUSED_POLICY } from './sandboxes/paused-policy';
import { DEFAULT_DISK_MB } from '../runtime/sandbox-disk';

export interface PlatformOnHostOptions {
  stateDir: string;
  host?: string;
  port?: number;
  runtime?: RuntimeChoice;
  /** With runtime runsc: gVisor's platform (default systrap). */
  runscPlatform?: RunscPlatform;
  redisUrl?: string;
  /** `redisUrl`'s AUTH password. */
  redisPassword?: string;
  apiKeyFile?: string;
  /** `memory` (in-process, default) or a redis:// URL the gateways read. */
  catalog?: string | WritableCatalog;
  /** A redis:// catalog's AUTH password (in a fleet also the shared Redis's, which is the same server). */
  catalogPassword?: string;
  /** The lab's sandbox network; default: a standalone one named after this instance. */
  network?: SandboxNetwork;
  /** The standalone network's subnet (a fleet host's delegated prefix); default a free /24 of 198.19.0.0/16. */
  sandboxSubnet?: string;
  /** Let the standalone network's sandboxes out through this host (a sandbox host; see host-network.ts). */
  routeOut?: boolean;
  /** One host of a fleet (docs/deploy-aws.md, Fleet); capacity defaults to the standalone subnet's free addresses. */
  fleet?: Omit<FleetOptions, 'capacity'> & { capacity?: number };
  /** Parent of the OCI runtime's state (default the runtime's, under /run). */
  runtimeStateRoot?: string;
  /** Parent of the sandboxes' upper dirs (default <stateDir>/runtime). */
  runtimeDataRoot?: string;
  /** The agent placed into every sandbox (default: the project's dist/bundle with this node). */
  agent?: AgentPayload;
  /** Where base root filesystems are cached (default the runtime's shared cache). */
  imageCacheRoot?: string;
  /** Base images from registries: insecure registries, what `e2bdev/base` means (the stack config's `images`). */
  images?: ImageSources;
  domain?: string;
  /** See PlatformOptions.teams (the benchmark's single-tenant peer). */
  teams?: boolean;
  /** The JSON file the dashboard reads the proxy's addresses from. */
  proxyFactsFile?: string;
  healthTimeoutMs?: number;
  readyTimeoutMs?: number;
  log?: (line: string) => void;
  /** See PlatformOptions.pendingTemplates. */
  pendingTemplates?: PlatformOptions['pendingTemplates'];
  /** See PlatformOptions.paused. */
  paused?: PlatformOptions['paused'];
  /** See PlatformOptions.volumesDir. */
  volumesDir?: string;
  /** See PlatformOptions.volumeMaxBytes. */
  volumeMaxBytes?: number;
  /** Template builds' deadline, log caps and concurrency (the stack's `builds` keys); default: their defaults. */
  buildLimits?: Partial<BuildLimits>;
  /** See PlatformOptions.stackEgress. */
  stackEgress?: PlatformOptions['stackEgress'];
  /** See PlatformOptions.mcpImages. */
  mcpImages?: PlatformOptions['mcpImages'];
  /** See PlatformOptions.warmPool. */
  warmPool?: PlatformOptions['warmPool'];
  /** See PlatformOptions.warmPoolCheckMs. */
  warmPoolCheckMs?: number;
  /** See PlatformOptions.egressUpstreamCaFiles. */
  egressUpstreamCaFiles?: string[];
  /** The storage collector's interval and how long unused files are kept (the stack's `gc` keys). */
  gc?: Partial<GcSettings>;
  /** What one sandbox may take (the stack's `limits`; every field has the runtime's default). */
  limits?: Partial<PlatformLimits>;
  /** The memory and CPUs the host's admission compares with (src/runtime/admission.ts); default this host's. */
  admissionCapacity?: Resources;
  /** false: sandboxes get no disk of their own (their writes are bounded only by the data root's file system). */
  disks?: boolean;
}

/** The stack's `limits` keys (src/config/limits.ts), as the platform and its runtime take them. */
export interface PlatformLimits {
  pidsLimit: number;
  nofile: number;
  consoleLogBytes: number;
  memoryOvercommit: number;
  cpuOvercommit: number;
  diskOvercommit: number;
  diskDefaultMB: number;
  diskMaxMB: number;
  templateMaxMemoryMB: number;
  templateMaxCpuCount: number;
  pausedToDiskAfterMinutes: number;
  pausedRetentionDays: number;
  volumeMaxMB: number;
}

export interface PlatformOnHost extends RunningPlatform {
  /** Names everything this platform makes on the host (containers, cgroups, namespaces). */
  instance: string;
  runtimeName: RuntimeName;
  /** The standalone network's subnet, when the platform made its own. */
  subnet?: string;
  /** Stops serving; with killSandboxes also removes every sandbox and the standalone network. */
  close(options?: { killSandboxes?: boolean }): Promise<void>;
}

/** The paused policy: options.paused as given, else the stack's limits keys over the defaults. */
function pausedPolicy(options: PlatformOnHostOptions): { paused?: PlatformOptions['paused'] } {
  if (options.paused) return { paused: options.paused };
  const { pausedToDiskAfterMinutes: minutes, pausedRetentionDays: days } = options.limits ?? {};
  if (minutes === undefined && days === undefined) return {};
  return {
    paused: {
      toDiskAfterMs: minutes !== undefined ? minutes * 60_000 : DEFAULT_PAUSED_POLICY.toDiskAfterMs,
      retentionMs: days !== undefined ? days * 86_400_000 : DEFAULT_PAUSED_POLICY.retentionMs,
    },
  };
}

/** A state dir belongs to one instance for good: its name is made once and kept there. */
export async function instanceName(stateDir: string): Promise<string> {
  const file = join(stateDir, 'instance');
  try {
    const name = (await readFile(file, 'utf8')).trim();
    if (/^[a-z][a-z0-9]{0,11}$/.test(name)) return name;
    throw new Error(`${file} holds ${JSON.stringify(name)}: expected 1-12 lower-case letters or digits, starting with a letter`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const name = `p${randomText(LOWER_ALNUM, 7)}`;
  await writeFile(file, `${name}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  return (await readFile(file, 'utf8')).trim();
}

async function openWritableCatalog(
  spec: string | WritableCatalog | undefined,
  log: (line: string) => void,
  password?: string,
): Promise<{ catalog: WritableCatalog; close: () => Promise<void> }> {
  if (spec === undefined || spec === 'memory') return { catalog: new MemoryCatalog(), close: async () => {} };
  if (typeof spec !== 'string') return { catalog: spec, close: async () => {} };
  if (spec.startsWith('redis://') || spec.startsWith('rediss://')) {
    const catalog = await RedisCatalog.open(spec, { onError: log, password });
    return { catalog, close: () => catalog.close() };
  }
  throw new Error(`--catalog ${JSON.stringify(spec)}: expected memory or redis://HOST:PORT[/DB]`);
}

export async function startPlatformOnHost(options: PlatformOnHostOptions): Promise<PlatformOnHost> {
  const log = options.log ?? (() => {});
  // Its host commands start in a small process of their own, not by forking the platform (src/util/spawn-helper.ts).
  const releaseSpawnHelper = useSpawnHelper();
  if (!releaseSpawnHelper) log(`${defaultSpawnHelperProgram()} is not built: host commands start from the platform's own process`);
  try {
    const platform = await startOnHost(options, log);
    return {
      ...platform,
      async close(closeOptions = {}) {
        try {
          await platform.close(closeOptions);
        } finally {
          await releaseSpawnHelper?.();
        }
      },
    };
  } catch (err) {
    await releaseSpawnHelper?.();
    throw err;
  }
}

async function startOnHost(options: PlatformOnHostOptions, log: (line: string) => void): Promise<PlatformOnHost> {
  await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
  const instance = await instanceName(options.stateDir);
  const dataRoot = options.runtimeDataRoot ?? join(options.stateDir, 'runtime');
  const limits = options.limits ?? {};
  const diskMB = limits.diskDefaultMB ?? DEFAULT_DISK_MB;
  const runtime = createOciRuntime({
    instance,
    runtime: options.runtime ?? 'auto',
    ...(options.runscPlatform ? { runscPlatform: options.runscPlatform } : {}),
    stateRoot: options.runtimeStateRoot,
    dataRoot,
    agent: options.agent,
    ...(limits.pidsLimit !== undefined ? { pidsLimit: limits.pidsLimit } : {}),
    ...(limits.nofile !== undefined ? { nofile: limits.nofile } : {}),
    ...(limits.consoleLogBytes !== undefined ? { consoleLogBytes: limits.consoleLogBytes } : {}),
    admission: {
      ...(limits.memoryOvercommit !== undefined ? { memoryOvercommit: limits.memoryOvercommit } : {}),
      ...(limits.cpuOvercommit !== undefined ? { cpuOvercommit: limits.cpuOvercommit } : {}),
      ...(limits.diskOvercommit !== undefined ? { diskOvercommit: limits.diskOvercommit } : {}),
    },
    // The volumes' disks count against the data root too where they share its file system.
    diskDirs: [volumesDirOf(options)],
    ...(options.admissionCapacity ? { capacity: options.admissionCapacity } : {}),
    disks: options.disks !== false,
    diskMB,
  });
  log(`runtime ${runtime.name}, instance ${instance}`);
  // The disk check of volumes and build steps: the runtime's data root and the images it counts (oci-runtime.ts).
  const diskAdmission =
    options.disks === false
      ? undefined
      : new DiskAdmission({
          root: runtime.paths.dataDir,
          imageDirs: [runtime.paths.dataDir, join(runtime.paths.dataDir, STEPS_DATA_DIR), volumesDirOf(options)],
          overcommit: limits.diskOvercommit ?? DEFAULT_ADMISSION.diskOvercommit,
        });
  const standalone = options.network
    ? undefined
    : await openSandboxHostNetwork(instance, { subnet: options.sandboxSubnet, routeOut: options.routeOut });
  if (standalone) log(`standalone sandbox network ${standalone.subnet} (namespace ${standalone.namespace})`);
  const network = options.network ?? (standalone as NonNullable<typeof standalone>).network;
  const fleet = options.fleet && {
    ...options.fleet,
    capacity: options.fleet.capacity ?? subnetCapacity(standalone?.subnet),
    ...(options.catalogPassword ? { redisPassword: options.catalogPassword } : {}),
  };
  if (fleet && fleet.capacity < 1)
    throw new Error('a fleet host needs its capacity: give it (--capacity) when the platform does not make its own sandbox network');
  const { catalog, close: closeCatalog } = await openWritableCatalog(options.catalog, log, options.catalogPassword);
  const baseImages = new MmdebstrapImages({ cacheRoot: options.imageCacheRoot });
  let platform: RunningPlatform;
  try {
    platform = await startPlatform({
      stateDir: options.stateDir,
      host: options.host,
      port: options.port,
      runtime,
      network,
      baseImages,
      catalog,
      redisUrl: options.redisUrl,
      redisPassword: options.redisPassword,
      ...(options.teams !== undefined ? { teams: options.teams } : {}),
      apiKeyFile: options.apiKeyFile,
      domain: options.domain,
      proxyFactsFile: options.proxyFactsFile,
      healthTimeoutMs: options.healthTimeoutMs,
      readyTimeoutMs: options.readyTimeoutMs,
      log,
      pendingTemplates: options.pendingTemplates,
      ...pausedPolicy(options),
      volumesDir: volumesDirOf(options),
      ...(options.volumeMaxBytes !== undefined
        ? { volumeMaxBytes: options.volumeMaxBytes }
        : limits.volumeMaxMB !== undefined
          ? { volumeMaxBytes: limits.volumeMaxMB * 1024 * 1024 }
          : {}),
      ...(options.stackEgress ? { stackEgress: options.stackEgress } : {}),
      ...(options.mcpImages !== undefined ? { mcpImages: options.mcpImages } : {}),
      ...(options.warmPool ? { warmPool: options.warmPool } : {}),
      ...(options.warmPoolCheckMs !== undefined ? { warmPoolCheckMs: options.warmPoolCheckMs } : {}),
      ...(options.egressUpstreamCaFiles ? { egressUpstreamCaFiles: options.egressUpstreamCaFiles } : {}),
      ...(options.gc ? { gc: options.gc } : {}),
      ...(options.disks !== false ? { diskSizeMB: diskMB } : {}),
      ...(diskAdmission ? { diskAdmission } : {}),
      ...(fleet ? { fleet } : {}),
      templates: mountTemplates({
        executor: createStepExecutor({
          instance,
          // Build steps run on the sandboxes' runtime; under runsc their egress relay sits beside the step's
          // namespace, not on its loopback (build-relay-link.ts).
          runtime: options.runtime ?? 'auto',
          ...(options.runscPlatform ? { runscPlatform: options.runscPlatform } : {}),
          stateRoot: options.runtimeStateRoot,
          dataRoot,
          proxyEnv: buildProxyEnv(process.env),
          disks: options.disks !== false,
          ...(options.buildLimits?.stepDiskMB !== undefined ? { diskMB: options.buildLimits.stepDiskMB } : {}),
          ...(diskAdmission ? { admission: diskAdmission } : {}),
        }),
        baseImages,
        ...(diskAdmission ? { diskAdmission } : {}),
        ...(options.images ? { images: options.images } : {}),
        resourceLimits: {
          defaultDiskMB: diskMB,
          maxDiskMB: limits.diskMaxMB ?? Math.max(diskMB, OPEN_TEMPLATE_LIMITS.maxDiskMB),
          maxMemoryMB: limits.templateMaxMemoryMB ?? OPEN_TEMPLATE_LIMITS.maxMemoryMB,
          maxCpuCount: limits.templateMaxCpuCount ?? OPEN_TEMPLATE_LIMITS.maxCpuCount,
        },
        // A build is checked by starting a real sandbox from it (the platform exists by the time a build runs).
        validator: sandboxValidator(() => platform?.sandboxes),
        ...(options.buildLimits ? { limits: options.buildLimits } : {}),
        // A template's image servers (the mcp-gateway template's preinstall list) come from where a create's would.
        ...(options.mcpImages !== false ? { preinstall: mcpPreinstallFor(options.mcpImages ?? {}) } : {}),
      }),
    });
  } catch (err) {
    await closeCatalog();
    throw err;
  }
  return {
    ...platform,
    instance,
    runtimeName: runtime.name,
    subnet: standalone?.subnet,
    async close(closeOptions = {}) {
      await platform.close(closeOptions);
      await closeCatalog();
      if (closeOptions.killSandboxes && standalone) await standalone.close();
      if (closeOptions.killSandboxes) {
        removeEmptyTree(join(options.runtimeStateRoot ?? DEFAULT_STATE_ROOT, instance));
        await runtime.releaseDataDir();
        runtime.releaseCgroupParent();
      }
    },
  };
}

/** The template builder on the platform's Redis, its files under <state dir>/templates, its routes mounted. */
function mountTemplates(o: Omit<TemplateServiceOptions, 'redis' | 'dataDir'>): (ctx: PlatformContext) => Promise<TemplateMount> {
  return async ({ redis, stateDir, teams, builtInNames, onBuildFinished, holds }) => {
    const service = await createTemplateService({
      ...o,
      redis,
      ledger: teams.ledger,
      dataDir: join(stateDir, 'templates'),
      builtInNames,
      onBuildFinished,
      holds,
    });
    return {
      routes: templateRoutes(service),
      resolver: service.resolver(),
      countOf: (teamID) => service.countOf(teamID),
      close: () => service.close(),
      storage: service.storage(),
      dashboard: {
        overview: () => service.overview(),
        buildLog: (templateID, buildID, offset) => service.buildLog(templateID, buildID, offset, LOG_PAGE_LIMIT),
      },
    };
  };
}

/** Removes a directory tree that holds only directories (the OCI runtimes' --root once every container is gone). */
function removeEmptyTree(dir: string): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) if (e.isDirectory()) removeEmptyTree(join(dir, e.name));
  try {
    fs.rmdirSync(dir);
  } catch {
    // Not empty: a container's state is still there, and it is not ours to remove.
  }
}
