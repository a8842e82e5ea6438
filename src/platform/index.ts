/**
 * The platform: the E2B-compatible API over the runtime, with its state in Redis and every sandbox published to the
 * catalog the gateway reads. `startPlatform` composes server, routes, store, runtime, network, catalog and timers.
 */
import { join } from 'node:path';
import type Redis from 'ioredis';
import { MemoryCatalog } from '../catalog/memory';
import type { WritableCatalog } from '../catalog/types';
import type { DiskAdmission } from '../runtime/admission';
import type { BaseImages, SandboxNetwork, SandboxRuntime } from '../runtime/types';
import { ApiKeys, keysOlderSdksRefuse, loadOrCreateApiKeyFile } from './teams/api-keys';
import { baseTemplateResolver, firstResolver } from './sandboxes/base-template';
import { redisClient, startPrivateRedis, type PrivateRedis } from './private-redis';
import { fleetRoutes } from './fleet/routes';
import { HostRegistry } from './fleet/registry';
import { SandboxService, type StackEgress } from './sandboxes/service';
import { type McpImageSources, mcpImagesFor, mcpImageStore } from './sandboxes/mcp-images';
import { withAttachedLayers } from './sandboxes/mcp-attach';
import { sandboxRoutes } from './sandboxes/routes';
import { SandboxStore } from './sandboxes/store';
import { startApiServer } from './http/server';
import type { AuditEntry } from './http/audit-actions';
import type { Route } from './http/types';
import type { TemplateResolver } from './sandboxes/template-resolver';
import { openTeams, teamRoutes, type Teams } from './teams';
import { teamScopedSandboxRoutes } from './sandboxes/team-scope';
import { logsRoutes } from './sandboxes/logs-routes';
import { SandboxLogs } from './sandboxes/logs';
import { metricsRoutes } from './sandboxes/metrics-routes';
import { signedUrlOwnerRoute } from './sandboxes/signed-url-owner';
import { UsageSampler } from './sandboxes/usage-sampler';
import { DEFAULT_STORE_PREFIX } from './sandboxes/store';
import { BASE_TEMPLATE_ID } from './sandboxes/base-template';
import { PlatformMetrics } from './prometheus';
import { dashboardRoutes, type DashboardTemplates } from './dashboard/routes';
import type { PausedPolicy } from './sandboxes/paused-policy';
import { SnapshotService } from './snapshots/service';
import { snapshotRoutes, withSnapshotDeletes } from './snapshots/routes';
import { SnapshotStore } from './snapshots/store';
import { VolumeService } from './volumes/service';
import { VolumeStore } from './volumes/store';
import { volumeRoutes } from './volumes/routes';
import { volumeContentRoutes } from './volumes/content-routes';
import { openSecrets, secretRoutes } from './secrets';
import { serveSecretResolver } from './secrets/egress-resolver';
import { StorageCollector, storageRoutes } from './storage';
import type { TemplateStorage } from './templates/service';
import { PathHolds } from '../util/path-holds';
import { defaultGcSettings, type GcSettings } from '../config';

export { ApiError, type Route } from './http/types';
export type { TemplateForSandbox, TemplateResolver } from './sandboxes/template-resolver';
export { startApiServer, type RunningApiServer, type ApiServerOptions } from './http/server';
export { validate } from './http/validate';
export { SandboxService } from './sandboxes/service';
export { BASE_TEMPLATE_ID } from './sandboxes/base-template';

/** What the template builder gets from the platform: the same Redis, and the state dir to keep its files under. */
export interface PlatformContext {
  redis: Redis;
  /** Teams, keys, quotas and the audit trail (templates record their team and hold its build and byte quotas). */
  teams: Teams;
  stateDir: string;
  /** Templates the platform has of its own (`base`): they exist for `Template.exists` too. */
  builtInNames: string[];
  /** Told when a template build ends (the platform's Prometheus metrics). */
  onBuildFinished(outcome: 'ready' | 'error', seconds: number): void;
  /** What builds and creates hold against the storage collector (the same for both). */
  holds: PathHolds;
}

/** What the platform mounts of the template builder: its routes, the resolver sandboxes use, and its shutdown. */
export interface TemplateMount {
  routes: Route[];
  resolver: TemplateResolver;
  /** How many templates a team owns (a team is deleted only when it owns none). */
  countOf?(teamID: string): Promise<number>;
  close?(): Promise<void>;
  /** What the dashboard shows of templates: their tags, builds and build logs. */
  dashboard?: DashboardTemplates;
  /** The builder's records and directories: what the storage collector removes unused files from. */
  storage?: TemplateStorage;
}

/** Where the volumes live: `volumesDir`, else <stateDir>/volumes. */
export function volumesDirOf(options: { stateDir: string; volumesDir?: string }): string {
  return options.volumesDir ?? join(options.stateDir, 'volumes');
}

export interface PlatformOptions {
  /** Where the platform keeps its Redis data, API key file and anything else of its own. */
  stateDir: string;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  runtime: SandboxRuntime;
  network: SandboxNetwork;
  /** Makes the built-in `base` template's root filesystem; without it only stored templates exist. */
  baseImages?: BaseImages;
  /** The template builder, made on the platform's Redis (on-host.ts wires the real one). */
  templates?: (ctx: PlatformContext) => TemplateMount | Promise<TemplateMount>;
  /**
   * Consulted when no template resolves an ID or alias (given the resolver of the rest): templates still being built
   * (the local system's background builds), waited for or refused with a reason.
   */
  pendingTemplates?: (known: TemplateResolver) => TemplateResolver;
  /** A Redis to use instead of starting a private one (a fleet shares it). */
  redisUrl?: string;
  /** Its AUTH password (when the URL holds none). */
  redisPassword?: string;
  /** Where the plain API keys are read from; created with a new key (0600) when missing. Default <stateDir>/api-key. */
  apiKeyFile?: string;
  /** The catalog the gateway reads; default an in-process MemoryCatalog. */
  catalog?: WritableCatalog;
  /** The domain clients should use for host-form sandbox URLs (null: their own). */
  domain?: string;
  /** The agent's port in every sandbox (default the contract's). */
  agentPort?: number;
  healthTimeoutMs?: number;
  readyTimeoutMs?: number;
  log?: (line: string) => void;
  /** One host of a fleet (docs/deploy-aws.md, Fleet): its registry record and the calls it passes on. */
  fleet?: FleetOptions;
  /**
   * false: one tenant, as before teams: the key file's keys act on everything, with no team check, quotas, rate
   * limit or audit trail. Only the benchmark of what teams cost uses it (its peer); default true.
   */
  teams?: boolean;
  /** The JSON file the dashboard reads the proxy's addresses from (dashboard/proxy-facts.ts). */
  proxyFactsFile?: string;
  /** When memory-paused sandboxes move to disk, and how long paused ones are kept (paused-policy.ts). */
  paused?: PausedPolicy;
  /** Where volumes live, a directory each (default <stateDir>/volumes; in a fleet the shared file system's mount). */
  volumesDir?: string;
  /** The most one volume may hold (default DEFAULT_VOLUME_MAX_BYTES). */
  volumeMaxBytes?: number;
  /**
   * A disk per volume, so writes from sandboxes are bounded by volumeMaxBytes too (volumes/service.ts). Default: on
   * one host yes; on a fleet host no (its volumes dir is a file system every host mounts, where an image may not be).
   */
  volumeDisks?: boolean;
  /** The stack's proxy templates and proxy: their sandboxes leave only through it (docs/network.md). */
  stackEgress?: StackEgress;
  /**
   * The OCI images of catalog MCP servers a create names, pulled into <stateDir>/images and placed in the sandbox
   * (sandboxes/mcp-images.ts): `mirror` stands in for Docker Hub, `insecureRegistries` may speak plain HTTP.
   * false: not fetched (the sandbox's gateway reports those servers as not there).
   */
  mcpImages?: false | McpImageSources;
  /** Sandboxes kept started per template ID or alias, for creates to take (sandboxes/warm-pool.ts); default none. */
  warmPool?: Record<string, number>;
  /** How often the warm pool is checked and refilled (default 2 s). */
  warmPoolCheckMs?: number;
  /** How often the storage collector runs and how long unused files are kept (the stack's `gc` keys). */
  gc?: Partial<GcSettings>;
  /** The disk of a sandbox whose template names none; absent: the runtime's default. */
  diskSizeMB?: number;
  /** The data root's disk check (runtime/admission.ts): volumes' disks and MCP image pulls go through it as sandboxes do. */
  diskAdmission?: DiskAdmission;
  /**
   * The key secret values are sealed with (32 bytes, base64, 0600; made when missing; docs/secrets.md). Default
   * <stateDir>/secrets.key; a fleet's hosts share the Redis and must be given the same file.
   */
  secretsKeyFile?: string;
  /**
   * CA certificate files (PEM) the egress relay trusts, besides the host's store (/etc/ssl/certs/ca-certificates.crt),
   * when it forwards a request a sandbox's `network.rules` transformed (docs/secrets.md): a destination behind a
   * private CA, or a test's own server.
   */
  egressUpstreamCaFiles?: string[];
}

export interface FleetOptions {
  /** This host's ID (an EC2 instance ID fits). */
  hostID: string;
  /** Where the other hosts reach this host's API, e.g. http://10.0.1.23:3001. */
  apiUrl: string;
  /** How many sandboxes this host takes (its sandbox addresses). */
  capacity: number;
  /** The fleet's shared Redis (the catalog's): the host registry, the teams, keys, quotas and audit trail. */
  redisUrl: string;
  /** Its AUTH password (ElastiCache's auth token), when the URL holds none. */
  redisPassword?: string;
}

export interface RunningPlatform {
  url: string;
  port: number;
  /** The first key of the key file (what a local user pastes as E2B_API_KEY). */
  apiKey: string;
  apiKeyFile: string;
  redis: Redis;
  catalog: WritableCatalog;
  sandboxes: SandboxService;
  /** The sandboxes' metrics samples (`getMetrics`). */
  usage: UsageSampler;
  /** Stops serving; sandboxes keep running for the next start, unless killSandboxes. */
  close(options?: { killSandboxes?: boolean }): Promise<void>;
}

export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  const log = options.log ?? (() => {});
  const cleanups: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: Error) => log(`shutdown: ${err.message}`));
  };
  try {
    let privateRedis: PrivateRedis | undefined;
    if (options.redisUrl === undefined) {
      privateRedis = await startPrivateRedis(options.stateDir, log);
      const started = privateRedis;
      cleanups.push(() => started.stop());
    }
    const redis = redisClient(
      options.redisUrl !== undefined
        ? { url: options.redisUrl, password: options.redisPassword }
        : { socketPath: (privateRedis as PrivateRedis).socketPath, password: (privateRedis as PrivateRedis).password },
    );
    redis.on('error', (err: Error) => log(`redis: ${err.message}`));
    cleanups.push(async () => {
      await redis.quit().catch(() => {});
      redis.disconnect();
    });
    await redis.ping();

    const apiKeyFile = options.apiKeyFile ?? join(options.stateDir, 'api-key');
    const keyFile = await loadOrCreateApiKeyFile(apiKeyFile);
    if (keyFile.generated) log(`a new API key was written to ${apiKeyFile}`);
    const refused = keysOlderSdksRefuse(keyFile.keys);
    if (refused > 0) {
      log(
        `${refused} of the keys in ${apiKeyFile} are not of the form e2b_<hex>: E2B SDKs 2.27 to 2.45 refuse them before sending (delete the file for a new key, or set E2B_VALIDATE_API_KEY=false where the SDK has it)`,
      );
    }

    // A fleet's hosts share the catalog's Redis: the host registry, and the teams, keys, quotas and audit trail.
    let shared: Redis | undefined;
    if (options.fleet) {
      const client = redisClient({ url: options.fleet.redisUrl, password: options.fleet.redisPassword });
      shared = client;
      client.on('error', (err: Error) => log(`fleet redis: ${err.message}`));
      cleanups.push(async () => {
        await client.quit().catch(() => {});
        client.disconnect();
      });
    }
    const teams = await openTeams(shared ?? redis, options.fleet?.hostID ?? 'local', keyFile.keys);
    const tenancy = options.teams ?? true;

    const catalog = options.catalog ?? new MemoryCatalog();
    let sandboxesRef: SandboxService | undefined;
    const metrics = new PlatformMetrics(
      async () => (sandboxesRef ? sandboxesRef.all() : []),
      async () =>
        Promise.all(
          (await teams.store.teams()).map(async (t) => ({
            team: t.name,
            used: await teams.ledger.usage(t.teamID),
            limits: { ...t.quotas },
          })),
        ),
      () => sandboxesRef?.warmPoolStats() ?? {},
    );
    const holds = new PathHolds();
    const ctx: PlatformContext = {
      redis,
      teams,
      stateDir: options.stateDir,
      builtInNames: options.baseImages ? [BASE_TEMPLATE_ID] : [],
      onBuildFinished: (outcome, seconds) => metrics.buildFinished(outcome, seconds),
      holds,
    };
    const templates = options.templates ? await options.templates(ctx) : undefined;
    if (templates?.close) cleanups.push(() => (templates.close as () => Promise<void>)());
    const resolvers: TemplateResolver[] = [];
    if (options.baseImages) resolvers.push(baseTemplateResolver(options.baseImages, { onLine: (line) => log(`base image: ${line}`) }));
    if (templates) resolvers.push(templates.resolver);

    const sandboxStore = new SandboxStore(redis);
    // Snapshots resolve first: their IDs are random and their names are the caller's to choose.
    let snapshots: SnapshotService | undefined;
    resolvers.unshift({
      resolve: (ref, teamID) => (snapshots as SnapshotService).resolver().resolve(ref, teamID),
      names: () => (snapshots as SnapshotService).resolver().names(),
    });
    const volumes = new VolumeService({
      // In a fleet every host mounts the same volumes, so their records live in the shared Redis.
      store: new VolumeStore(shared ?? redis),
      sandboxes: () => sandboxStore.all(),
      dir: volumesDirOf(options),
      ...(options.volumeMaxBytes !== undefined ? { maxBytes: options.volumeMaxBytes } : {}),
      disks: options.volumeDisks ?? options.fleet === undefined,
      ...(tenancy ? { ledger: teams.ledger } : {}),
      ...(options.diskAdmission ? { admission: options.diskAdmission } : {}),
    });
    // In a fleet every host resolves the same secrets, so they live in the shared Redis.
    const secrets = openSecrets(shared ?? redis, options.secretsKeyFile ?? join(options.stateDir, 'secrets.key'));
    const sandboxes = new SandboxService({
      store: sandboxStore,
      volumes,
      ...(tenancy ? { quotas: teams.ledger } : {}),
      runtime: options.runtime,
      network: options.network,
      catalog,
      templates: options.pendingTemplates
        ? firstResolver([firstResolver(resolvers), options.pendingTemplates(firstResolver(resolvers))])
        : firstResolver(resolvers),
      agentPort: options.agentPort,
      healthTimeoutMs: options.healthTimeoutMs,
      readyTimeoutMs: options.readyTimeoutMs,
      log,
      ...(options.paused ? { paused: options.paused } : {}),
      ...(options.stackEgress ? { stackEgress: options.stackEgress } : {}),
      ...(options.diskSizeMB !== undefined ? { diskSizeMB: options.diskSizeMB } : {}),
      ...(options.fleet ? { hostID: options.fleet.hostID } : {}),
      logs: new SandboxLogs(redis, DEFAULT_STORE_PREFIX),
      observer: metrics,
      holds,
      ...(options.mcpImages === false
        ? {}
        : { mcpImages: mcpImagesFor(options.stateDir, options.mcpImages ?? {}, log, holds, options.diskAdmission) }),
      ...(options.warmPool ? { warmPool: options.warmPool } : {}),
      findTeamID: async (nameOrID) => (await teams.store.findTeam(nameOrID).catch(() => undefined))?.teamID,
      ...(options.warmPoolCheckMs !== undefined ? { warmPoolCheckMs: options.warmPoolCheckMs } : {}),
      transforms: {
        caDir: join(options.stateDir, 'egress-ca'),
        resolverSocket: join(options.stateDir, 'egress-secrets.sock'),
        ...(options.egressUpstreamCaFiles ? { upstreamCaFiles: options.egressUpstreamCaFiles } : {}),
      },
    });
    sandboxesRef = sandboxes;
    cleanups.push(() => sandboxes.close());
    const resolver = await serveSecretResolver(join(options.stateDir, 'egress-secrets.sock'), secrets, (id) => sandboxStore.get(id), log);
    cleanups.push(() => resolver.close());
    const runtime = options.runtime;
    const usage = new UsageSampler({ read: (id) => runtime.usage?.(id), sandboxes: () => sandboxes.all(), log });
    usage.start();
    cleanups.push(() => usage.stop());
    const snapshotStore = new SnapshotStore(redis);
    snapshots = new SnapshotService(
      snapshotStore,
      sandboxes,
      join(options.stateDir, 'snapshots'),
      Date.now,
      tenancy ? teams.ledger : undefined,
    );
    const { kept, removed } = await sandboxes.reconcile();
    if (kept.length + removed.length > 0) log(`found ${kept.length} sandbox(es) again, removed ${removed.length} dead or half-made`);
    const alive = new Set(kept.map((id) => `sandbox:${id}`));
    // Stored bytes (templates, snapshots, volumes) are held until what holds them is deleted, not by a running platform.
    const swept = await teams.ledger.sweepHere((hold) => alive.has(hold) || hold.startsWith('bytes:'));
    if (swept > 0) log(`gave back ${swept} quota hold(s) of sandboxes or builds that a stop cut short`);
    sandboxes.startWarmPool();
    // What sandboxes write into volumes reaches their teams' stored bytes (volumes/service.ts).
    volumes.start();
    cleanups.push(() => volumes.stop());

    // Unused layers, uploads and pulled images go (docs/templates.md#storage): periodically, and on POST /admin/gc.
    const gc = { ...defaultGcSettings(), ...options.gc };
    const collector = templates?.storage
      ? new StorageCollector({
          templates: templates.storage,
          ...(options.mcpImages === false ? {} : { mcpImages: mcpImageStore(options.stateDir) }),
          // An attached MCP image's layers are the sandbox's too (mcp-attach.ts).
          sandboxes: async () => (await sandboxStore.all()).map(withAttachedLayers),
          snapshots: async () => (await snapshotStore.all()).map((s) => ({ ...s, template: withAttachedLayers(s.template) })),
          holds,
          ...(tenancy ? { ledger: teams.ledger } : {}),
          keepUnusedSeconds: gc.keepUnusedSeconds,
          log,
        })
      : undefined;

    const view = { domain: options.domain ?? null, clientID: 'sandbox-kit' };
    // The metrics list before GET /sandboxes/:sandboxID, which would otherwise take it.
    const ownRoutes = [
      ...metricsRoutes(sandboxes, usage),
      ...sandboxRoutes(sandboxes, view),
      ...logsRoutes(sandboxes),
      ...snapshotRoutes(snapshots, sandboxes, view, join(options.stateDir, 'forks')),
    ];
    let routes = tenancy ? teamScopedSandboxRoutes(ownRoutes, (id) => sandboxStore.get(id)) : ownRoutes;
    let registry: HostRegistry | undefined;
    if (options.fleet && shared) {
      const fleet = options.fleet;
      const resolver = firstResolver(resolvers);
      const self = new HostRegistry(shared, { hostID: fleet.hostID, apiUrl: fleet.apiUrl, capacity: fleet.capacity }, async () => ({
        sandboxes: await sandboxes.running(),
        templates: await resolver.names(),
        accepting: true,
      }));
      registry = self;
      routes = fleetRoutes(routes, {
        hostID: fleet.hostID,
        hosts: () => self.hosts(),
        catalog,
        changed: () => void self.refresh().catch((err: Error) => log(`fleet registry: ${err.message}`)),
      });
    }
    const holdings = async (teamID: string): Promise<string | undefined> => {
      const usage = await teams.ledger.usage(teamID);
      const owned = (await templates?.countOf?.(teamID)) ?? 0;
      const parts = [
        ...(usage.sandboxes > 0 ? [`${usage.sandboxes} sandbox(es)`] : []),
        ...(usage.builds > 0 ? [`${usage.builds} build(s) running`] : []),
        ...(owned > 0 ? [`${owned} template(s)`] : []),
      ];
      return parts.length > 0 ? parts.join(', ') : undefined;
    };
    const apiKeys = tenancy ? teams.authenticator : ApiKeys.fromKeys(keyFile.keys);
    const server = await startApiServer({
      host: options.host,
      port: options.port,
      routes: [
        ...routes,
        signedUrlOwnerRoute(sandboxes),
        metrics.route(),
        ...dashboardRoutes({
          apiKeys,
          sandboxes: () => sandboxes.all(),
          usage,
          ...(templates?.dashboard ? { templates: templates.dashboard } : {}),
          proxyFactsFile: options.proxyFactsFile,
        }),
        ...withSnapshotDeletes(templates?.routes ?? [], snapshots),
        ...volumeRoutes(volumes),
        ...volumeContentRoutes(volumes),
        ...secretRoutes(secrets),
        ...(collector ? storageRoutes(collector) : []),
        ...(tenancy
          ? teamRoutes({
              ...teams,
              holdings,
              removeWith: async (teamID) => {
                await secrets.destroyTeam(teamID);
              },
              measure: (teamID) => volumes.measureTeam(teamID),
            })
          : []),
      ],
      apiKeys,
      ...(tenancy ? { audit: (entry: AuditEntry) => teams.audit.record(entry) } : {}),
      log,
    });
    cleanups.push(() => server.close());
    log(`platform API on ${server.url}`);
    if (collector) {
      collector.start(gc.intervalSeconds);
      cleanups.push(() => collector.stop());
    }
    if (registry) {
      const self = registry;
      await self.start();
      // Out of the fleet first, so no call is placed or passed on here while the rest stops.
      cleanups.push(() => self.close());
      log(`fleet host ${self.self.hostID}: ${self.self.apiUrl}, capacity ${self.self.capacity}`);
    }
    let closing: Promise<void> | undefined;

    return {
      url: server.url,
      port: server.port,
      apiKey: keyFile.keys[0],
      apiKeyFile,
      redis,
      catalog,
      sandboxes,
      usage,
      async close(closeOptions = {}) {
        if (closing) return closing;
        closing = (async () => {
          await registry?.close();
          await server.close();
          if (closeOptions.killSandboxes) {
            await sandboxes.killAll();
            // No sandbox is left to use a volume (paused ones are on disk): their disks are unmounted.
            await volumes.unmountAll();
          }
          await unwind();
        })();
        return closing;
      },
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}
