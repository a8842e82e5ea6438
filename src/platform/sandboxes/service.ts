/**
 * The sandbox lifecycle: create, pause, resume, set timeout, kill, and finding everything again after a restart.
 * Every change goes to the store first (so a crash leaves a record to act on), then to the host (network, runtime),
 * then to the catalog the gateway reads.
 */
import { DEFAULT_AGENT_PORT } from '../../contract/agent-port';
import { hashAccessToken } from '../../contract/access-token';
import type { WritableCatalog } from '../../catalog/types';
import { AdmissionError } from '../../runtime/admission';
import type { SandboxNetwork, SandboxRuntime, SandboxSpec } from '../../runtime/types';
import { AgentClient, CommandStillRunning, type ProcessResult, type RunningProcess } from './agent-client';
import { Deadlines } from './deadlines';
import { KeyedLock } from './keyed-lock';
import { newAccessToken, newEnvdAccessToken, newSandboxID } from './ids';
import type { SignedUrlQuery } from '../../contract/file-signature';
import { findSigner, type SignedUrlOwner } from './signer';
import { LineSplitter, LogWriter, logEntry, type SandboxLogEntry, type SandboxLogLevel, type SandboxLogs } from './logs';
import { DEFAULT_PAUSED_POLICY, nextPausedEvent, type PausedPolicy } from './paused-policy';
import type { PauseKind, SandboxRecord } from './record';
import type { ProxyTarget } from '../../runtime/network/egress-policy';
import { egressPolicyOf, type EgressRequest } from './network-requests';
import { type EgressTransformOptions, prepareEgressCa, removeSandboxCa, transformPolicyOf } from './egress-transforms';
import type { NewSandbox, NetworkUpdate } from './requests';
import type { SandboxStore } from './store';
import { ApiError } from '../http/types';
import type { TemplateForSandbox, TemplateResolver } from './template-resolver';
import { sleep } from '../../util/poll';
import { DEFAULT_TEAM_ID, teamOf } from '../teams/model';
import type { QuotaLedger } from '../teams/quotas';
import type { VolumeMount, VolumeResolver } from './volume-mounts';
import { poolTemplateRef, WarmPool, type PooledSandbox, type PoolStats } from './warm-pool';
import type { PathHolds, Release } from '../../util/path-holds';
import { mcpImageRoots } from './mcp-images';
import { McpImageAttacher, type McpImageSource, carriedImages, withAttachedLayers } from './mcp-attach';
import { restartMcpGateway } from './mcp-gateway-restart';
import { ATTACHED_IMAGES_DIR } from '../../mcp/launch/image-dir';

export interface SandboxServiceOptions {
  store: SandboxStore;
  runtime: SandboxRuntime;
  network: SandboxNetwork;
  catalog: WritableCatalog;
  templates: TemplateResolver;
  /** The agent's port in every sandbox. */
  agentPort?: number;
  /** How long a new or resumed sandbox's agent has to answer GET /health. */
  healthTimeoutMs?: number;
  /** How long a template's ready command has to succeed. */
  readyTimeoutMs?: number;
  log?: (line: string) => void;
  now?: () => number;
  /** In a fleet: this host's ID, written into every catalog entry so other hosts pass calls for it on here. */
  hostID?: string;
  /** Each sandbox holds one of its team's sandboxes, its vCPUs and its MiB from create until it is removed. */
  quotas?: QuotaLedger;
  /** Where each sandbox's log goes (start command output, lifecycle); without it sandboxes have no log. */
  logs?: SandboxLogs;
  /** Told how long each operation and each of its phases took (the Prometheus histograms). */
  observer?: SandboxObserver;
  /** When a memory-paused sandbox moves to disk, and how long a paused one is kept. */
  paused?: PausedPolicy;
  /** Finds the team's volumes a create mounts; without it a create with volume mounts is refused. */
  volumes?: VolumeResolver;
  /**
   * The OCI images the create's `mcp` names and the template's layers lack (mcp-images.ts): pulled after the create
   * answered and attached to the running sandbox (mcp-attach.ts), or, where the runtime cannot attach (runsc),
   * pulled within the create as read-only layers above the template's. Without it, image servers are not fetched
   * and the sandbox's MCP gateway reports them as not there.
   */
  mcpImages?: McpImageSource;
  /** The stack's proxy templates, whose sandboxes leave only through the stack's proxy (docs/network.md). */
  stackEgress?: StackEgress;
  /**
   * How many sandboxes to keep started per template ID or alias (warm-pool.ts); resolved as the default team
   * resolves them, or `TEAM/TEMPLATE` as that team does (poolTemplateRef). Absent or all 0: no pool, every create
   * starts its sandbox.
   */
  warmPool?: Record<string, number>;
  /** A team's ID by its name or ID, or undefined when there is none (a warm pool's `TEAM/TEMPLATE`). */
  findTeamID?: (nameOrID: string) => Promise<string | undefined>;
  /** How often the warm pool is checked and refilled (default warm-pool.ts's). */
  warmPoolCheckMs?: number;
  /** A create holds its template's layers here until its record names them (the storage collector leaves them). */
  holds?: PathHolds;
  /** The disk of a sandbox whose template names none (the stack's limits.diskDefaultMB); absent: the runtime's. */
  diskSizeMB?: number;
  /** Where sandboxes' egress CAs live and the relay resolves secrets; without it `network.rules` are refused. */
  transforms?: EgressTransformOptions;
}

export interface StackEgress {
  /** Aliases (or IDs) of the stack's proxy templates. */
  templates: string[];
  /** The stack's proxy server(s): the only destinations of those sandboxes, TCP and UDP. */
  proxy: ProxyTarget[];
}

/** A sandbox made from another's files (a fork, or a snapshot's layers) rather than from a template by name. */
export interface SandboxOrigin {
  template: TemplateForSandbox;
  /** A copy of filesystem changes (runtime copyChanges) that becomes the new sandbox's own. */
  changesFrom?: string;
}

export type TimedOperation = 'create' | 'resume' | 'pause';

export interface SandboxObserver {
  /** One phase of an operation took `seconds` (create: network, container, agent, init, start+ready, publish). */
  phase(operation: TimedOperation, phase: string, seconds: number): void;
  /** The whole operation ended. */
  done(operation: TimedOperation, outcome: 'ok' | 'error', seconds: number): void;
}

/** Times the phases of one operation for the observer; `took` keeps them for the log line. */
class PhaseClock {
  readonly took: string[] = [];
  private readonly start: number;
  private mark: number;

  constructor(
    private readonly operation: TimedOperation,
    private readonly observer: SandboxObserver | undefined,
    /** performance.now() when the operation began, if before the clock was made. */
    startedAt = performance.now(),
  ) {
    this.start = startedAt;
    this.mark = startedAt;
  }

  step(name: string): void {
    const now = performance.now();
    this.took.push(`${name} ${Math.round(now - this.mark)}`);
    this.observer?.phase(this.operation, name, (now - this.mark) / 1000);
    this.mark = now;
  }

  done(outcome: 'ok' | 'error'): void {
    this.observer?.done(this.operation, outcome, (performance.now() - this.start) / 1000);
  }
}

export const DEFAULT_HEALTH_TIMEOUT_MS = 30_000;
export const DEFAULT_READY_TIMEOUT_MS = 60_000;
/** A pooled sandbox's agent answers /init in milliseconds; one that does not within this is not handed out. */
const POOL_INIT_TIMEOUT_MS = 5000;
/** How long a pooled sandbox's agent has to answer the pool's check. */
const POOL_ALIVE_TIMEOUT_MS = 3000;
const READY_POLL_MS = 100;

/** A pooled sandbox's agent did not take a create's /init: it is removed and the create takes the next one. */
class PooledAgentGone extends Error {}

/** The one answer for a sandbox that does not exist, or is not the caller's to see: the two must not differ. */
export function sandboxNotFound(sandboxID: string): ApiError {
  return new ApiError(404, `sandbox ${JSON.stringify(sandboxID)} not found`);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class SandboxService {
  private readonly lock = new KeyedLock();
  private readonly deadlines: Deadlines;
  /** The template's start command of each sandbox this process started, followed until kill. */
  private readonly startCommands = new Map<string, RunningProcess>();
  /** Creates under way, so close() can stop them. */
  private readonly creating = new Map<string, AbortController>();
  private readonly agentPort: number;
  private readonly healthTimeoutMs: number;
  private readonly readyTimeoutMs: number;
  private readonly log: (line: string) => void;
  private readonly now: () => number;
  private readonly logWriter: LogWriter | undefined;
  private readonly paused: PausedPolicy;
  private readonly pool: WarmPool | undefined;
  /** Each pooled sandbox's hold on its layers (it has no record yet). */
  private readonly poolHolds = new Map<string, Release>();
  /** Pulls and attaches the images of image servers after their create answered. */
  private readonly attacher: McpImageAttacher | undefined;
  private closed = false;

  constructor(private readonly o: SandboxServiceOptions) {
    this.agentPort = o.agentPort ?? DEFAULT_AGENT_PORT;
    this.healthTimeoutMs = o.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS;
    this.readyTimeoutMs = o.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    this.log = o.log ?? (() => {});
    this.now = o.now ?? Date.now;
    this.paused = o.paused ?? DEFAULT_PAUSED_POLICY;
    this.deadlines = new Deadlines((id) => void this.expire(id), this.now);
    this.logWriter = o.logs ? new LogWriter(o.logs, (err) => this.log(`sandbox log: ${err.message}`)) : undefined;
    const sizes = new Map(Object.entries(o.warmPool ?? {}).filter(([, n]) => n > 0));
    this.pool =
      sizes.size === 0
        ? undefined
        : new WarmPool({
            sizes,
            resolve: async (name) => {
              const { team, ref } = poolTemplateRef(name);
              const teamID = team === undefined ? DEFAULT_TEAM_ID : await this.o.findTeamID?.(team);
              // A team that does not exist (yet) has no templates: nothing is pooled until it does.
              if (teamID === undefined) return undefined;
              return this.o.templates.resolve(ref, teamID);
            },
            start: (template) => this.startPooled(template),
            alive: (s) =>
              this.agentFor({ address: s.address, agentPort: this.agentPort })
                .waitForHealth(POOL_ALIVE_TIMEOUT_MS)
                .then(
                  () => true,
                  () => false,
                ),
            discard: async (s) => {
              await this.o.runtime.kill(s.sandboxID);
              await this.o.network.detach(s.sandboxID);
              this.releasePoolHold(s.sandboxID);
            },
            log: this.log,
            ...(o.warmPoolCheckMs !== undefined ? { checkEveryMs: o.warmPoolCheckMs } : {}),
          });
    o.runtime.onEnded?.((id, why) => this.ended(id, why));
    this.attacher = o.mcpImages
      ? new McpImageAttacher({
          runtime: o.runtime,
          store: o.store,
          images: o.mcpImages,
          locked: (id, fn) => this.lock.run(id, fn),
          log: this.log,
        })
      : undefined;
  }

  /** Begins filling the warm pool (after reconcile: until then a pooled sandbox would look like a leftover). */
  startWarmPool(): void {
    this.pool?.start();
  }

  /** The warm pool's ready sandboxes per template (IDs and addresses; their tokens never leave the platform). */
  warmPool(): Record<string, Array<{ sandboxID: string; address: string }>> {
    return this.pool?.members() ?? {};
  }

  /** Each warm pool's sandboxes and its takes, misses and evictions, per template name (the platform's metrics). */
  warmPoolStats(): Record<string, PoolStats> {
    return this.pool?.statistics() ?? {};
  }

  /**
   * The runtime's create of a sandbox a caller asked for: when the host's admission refuses it, pooled sandboxes are
   * removed for it (another template's first, then its own) and the pool's fills wait until it is admitted, so the
   * pool never holds memory and CPUs a real create needs. Refused with the pool empty: the admission's error.
   */
  private async createMakingRoom(spec: SandboxSpec, template: TemplateForSandbox): Promise<void> {
    let releaseFills: (() => void) | undefined;
    try {
      for (;;) {
        try {
          await this.o.runtime.create(spec);
          return;
        } catch (err) {
          if (!(err instanceof AdmissionError) || !this.pool) throw err;
          releaseFills ??= this.pool.holdFills();
          const room = this.pool.evict(template);
          // A sandbox being started for the pool holds the room: once it is ready it can be evicted, failed it is gone.
          if (!room && (await this.pool.fillSettled())) continue;
          if (!room) throw err;
          await this.pool.discard(room, `sandbox ${spec.sandboxID} needs its memory and CPUs`);
        }
      }
    } finally {
      releaseFills?.();
    }
  }

  /** Why the host's admission would refuse a sandbox of `template` now, or undefined when it has room. */
  private hostProblem(template: TemplateForSandbox): string | undefined {
    return this.o.runtime.admissionProblem?.({ memoryMB: template.memoryMB, cpuCount: template.cpuCount });
  }

  /**
   * A cold create (or a start from disk) the host's admission refuses, with no pooled sandbox to make room for it
   * (createMakingRoom), is a 429 (`<what>: <the admission's problem>`) before its record, quota hold, network
   * attachment, disk or container is made and removed again: a stream of them on a full host costs it an answer each,
   * not a sandbox's making. The runtime's create checks again, holding what it admits, for those that race this one.
   */
  private refuseWithoutRoom(template: TemplateForSandbox, what: string): void {
    const problem = this.hostProblem(template);
    if (problem !== undefined && !this.pool?.canMakeRoom()) throw new ApiError(429, `${what}: ${problem}`);
  }

  /** A sandbox's disk: its template's, else the stack's default; neither: the runtime's. */
  private diskOf(template: TemplateForSandbox): { diskSizeMB?: number } {
    const size = template.diskSizeMB ?? this.o.diskSizeMB;
    return size !== undefined ? { diskSizeMB: size } : {};
  }

  /** One sandbox for the pool: networked, its container started, its agent answering and holding a token of ours. */
  private async startPooled(template: TemplateForSandbox): Promise<PooledSandbox> {
    const sandboxID = newSandboxID();
    const token = newEnvdAccessToken(sandboxID);
    // It has no record to name its layers: it holds them against the storage collector until taken or discarded.
    // A full host: refused before a network is attached for it (the pool tries again at its next check).
    const full = this.hostProblem(template);
    if (full) throw new AdmissionError(`no room for a pooled sandbox: ${full}`);
    const hold = this.o.holds ? await this.o.holds.claim(template.layers) : () => undefined;
    if (!hold) throw new Error(`the layers of template ${template.templateID} build ${template.buildID} were removed`);
    this.poolHolds.set(sandboxID, hold);
    try {
      // No egress rules yet: nothing but the agent runs in it until a create takes it and loads the create's.
      const network = await this.o.network.attach(sandboxID);
      const disk = this.diskOf(template);
      await this.o.runtime.create(containerSpec({ sandboxID, envdAccessToken: token, ...disk }, template, network));
      const agent = this.agentFor({ address: network.address, agentPort: this.agentPort });
      await agent.waitForHealth(this.healthTimeoutMs);
      // While it waits, its agent runs once what a take runs (an /init that changes nothing, then a Stat of /, the
      // calls' code compiled and the platform's connection open): the take's /init and the caller's first call find it
      // warm. Both are the agent's own code under the pool's token; nothing of a caller's is in it yet.
      await agent.init({ accessToken: token, envVars: {}, defaultUser: template.user }, token, POOL_INIT_TIMEOUT_MS);
      await agent.stat(token, '/', POOL_INIT_TIMEOUT_MS);
      return { sandboxID, address: network.address, token, template, readyAt: this.now() };
    } catch (err) {
      await this.o.runtime.kill(sandboxID).catch(() => undefined);
      await this.o.network.detach(sandboxID).catch(() => undefined);
      this.releasePoolHold(sandboxID);
      throw err;
    }
  }

  private releasePoolHold(sandboxID: string): void {
    this.poolHolds.get(sandboxID)?.();
    this.poolHolds.delete(sandboxID);
  }

  /**
   * A ready sandbox of this build from the warm pool, held of the team's quota (a `429` puts it back untouched), or
   * undefined when the pool has none. Its /init is the create's (takeOver).
   */
  private async takeFromPool(
    template: TemplateForSandbox,
    recordFor: (sandboxID: string) => SandboxRecord,
    clock: PhaseClock,
  ): Promise<{ record: SandboxRecord; pooled: PooledSandbox } | undefined> {
    const pooled = this.pool?.take(template);
    if (!this.pool || !pooled) return undefined;
    const record = recordFor(pooled.sandboxID);
    try {
      await this.reserve(record);
    } catch (err) {
      // Nothing reached it: it waits for the next create.
      this.pool.giveBack(pooled);
      throw err;
    }
    clock.step('quota');
    // The create holds the same layers (resolveHeld) until its record names them.
    this.releasePoolHold(pooled.sandboxID);
    record.address = pooled.address;
    return { record, pooled };
  }

  /** The sandbox holds one of its team's sandboxes, its vCPUs and its MiB until it is removed. */
  private async reserve(record: SandboxRecord): Promise<void> {
    await this.o.quotas?.reserve(teamOf(record), `sandbox:${record.sandboxID}`, {
      sandboxes: 1,
      vcpus: record.cpuCount,
      memoryMiB: record.memoryMB,
    });
  }

  /** A line of the sandbox's own log (what `e2b sandbox logs` shows). */
  private note(sandboxID: string, level: SandboxLogLevel, message: string, logger = 'platform', extra: Record<string, string> = {}): void {
    this.logWriter?.write(sandboxID, logEntry(level, logger, message, extra));
  }

  /** Which of this platform's sandboxes signed a /files URL (see signed-url-owner.ts). */
  async signedUrlOwner(q: SignedUrlQuery): Promise<SignedUrlOwner> {
    const live = (await this.o.store.all()).filter((r) => r.state !== 'creating');
    return findSigner(live, q, Math.floor(this.now() / 1000));
  }

  /** The sandbox's log, oldest first (404 for an unknown sandbox). */
  async logs(sandboxID: string): Promise<SandboxLogEntry[]> {
    await this.get(sandboxID);
    await this.logWriter?.settled();
    return (await this.o.logs?.all(sandboxID)) ?? [];
  }

  agentFor(record: Pick<SandboxRecord, 'address' | 'agentPort'>): AgentClient {
    return new AgentClient(`http://${record.address}:${record.agentPort}`);
  }

  private checkCanEnforce(egress: EgressRequest, onlyTo: ProxyTarget[] | undefined): void {
    if (onlyTo?.length && Object.keys(egress).length > 0) {
      throw new ApiError(
        400,
        "sandboxes of the stack's proxy template leave only through the stack's proxy: egress rules (allowOut, denyOut, egressProxy, allow_internet_access) do not apply to them; leave them out",
      );
    }
    if (egress.rules !== undefined && (!this.o.transforms || !this.o.network.setEgressPolicy)) {
      throw new ApiError(
        400,
        'body field "network.rules": per-domain transform rules cannot be enforced by this platform\'s sandbox network; leave them out',
      );
    }
    if (egressPolicyOf(egress, onlyTo) !== undefined && !this.o.network.setEgressPolicy) {
      throw new ApiError(
        400,
        "egress rules (allowOut, denyOut, egressProxy, allow_internet_access: false) cannot be enforced by this platform's sandbox network",
      );
    }
  }

  /** The stack's proxy for a sandbox of one of its proxy templates. */
  private onlyToFor(template: { templateID: string; alias?: string }): ProxyTarget[] | undefined {
    const s = this.o.stackEgress;
    if (!s || s.proxy.length === 0) return undefined;
    return s.templates.includes(template.templateID) || (template.alias !== undefined && s.templates.includes(template.alias))
      ? s.proxy
      : undefined;
  }

  private policyOf(record: SandboxRecord) {
    return egressPolicyOf(record.egress, record.egressOnlyTo, transformPolicyOf(this.o.transforms, record));
  }

  private async enforceEgress(record: SandboxRecord): Promise<void> {
    const policy = this.policyOf(record);
    if (policy !== undefined || record.egress !== undefined) await this.o.network.setEgressPolicy?.(record.sandboxID, policy);
  }

  /** `PUT /sandboxes/{id}/network`: the whole egress configuration replaced, on a running or paused sandbox. */
  updateNetwork(sandboxID: string, update: NetworkUpdate): Promise<SandboxRecord> {
    return this.lock.run(sandboxID, async () => {
      const record = await this.get(sandboxID);
      const egress: EgressRequest = {
        ...(update.allowOut ? { allowOut: update.allowOut } : {}),
        ...(update.denyOut ? { denyOut: update.denyOut } : {}),
        ...(update.allow_internet_access !== undefined ? { allowInternetAccess: update.allow_internet_access } : {}),
        ...(update.egressProxy ? { egressProxy: update.egressProxy } : {}),
        ...(update.rules ? { rules: update.rules } : {}),
      };
      this.checkCanEnforce(egress, record.egressOnlyTo);
      if (egress.rules && Object.keys(egress.rules).length > 0 && !record.egressCa)
        throw new ApiError(
          400,
          'body field "network.rules": this sandbox was created without network.rules, so it does not trust an egress CA: create it with network.rules (an empty object will do) to set rules later',
        );
      record.egress = egress;
      // Paused to disk it has no network attachment: its resume attaches it with the policy of the record.
      if (record.pausedTo !== 'disk') await this.enforceEgress(record);
      await this.o.store.put(record);
      return record;
    });
  }

  /** Resolves once the agent answers, was initialised, and the template's ready command succeeded. */
  async create(request: NewSandbox, teamID: string = DEFAULT_TEAM_ID, origin?: SandboxOrigin): Promise<SandboxRecord> {
    if (this.closed) throw new ApiError(503, 'the platform is shutting down');
    const egress: EgressRequest = {
      ...(request.network?.allowOut ? { allowOut: request.network.allowOut } : {}),
      ...(request.network?.denyOut ? { denyOut: request.network.denyOut } : {}),
      ...(request.allow_internet_access !== undefined ? { allowInternetAccess: request.allow_internet_access } : {}),
      ...(request.network?.egressProxy ? { egressProxy: request.network.egressProxy } : {}),
      ...(request.network?.rules ? { rules: request.network.rules } : {}),
    };
    this.checkCanEnforce(egress, undefined);
    if (request.network?.httpsPorts?.includes(this.agentPort))
      throw new ApiError(
        400,
        `body field "network.httpsPorts": ${this.agentPort} is the port of the sandbox's agent (envd), which the gateway reaches itself; leave it out`,
      );
    const { resolved, release } = await this.resolveHeld(request.templateID, teamID, origin);
    try {
      return await this.createFrom(request, teamID, egress, resolved, origin);
    } finally {
      release();
    }
  }

  /**
   * The template (or origin) to create from, its layers held until the create ends: the sandbox's record names them
   * by then. When the storage collector took them first (the template was deleted meanwhile), it is looked up again.
   */
  private async resolveHeld(
    templateID: string,
    teamID: string,
    origin: SandboxOrigin | undefined,
  ): Promise<{ resolved: TemplateForSandbox; release: Release }> {
    for (let tries = 0; tries < 3; tries++) {
      const resolved = origin?.template ?? (await this.o.templates.resolve(templateID, teamID));
      if (!resolved) break;
      const release = this.o.holds ? await this.o.holds.claim(withAttachedLayers(resolved).layers) : () => undefined;
      if (release) return { resolved, release };
      if (origin) throw new ApiError(409, `the files of ${JSON.stringify(templateID)} were removed; create it again`);
    }
    throw new ApiError(
      404,
      `template ${JSON.stringify(templateID)} not found: no ready template has that ID or alias (the built-in one is "base")`,
    );
  }

  private async createFrom(
    request: NewSandbox,
    teamID: string,
    egress: EgressRequest,
    resolved: TemplateForSandbox,
    origin: SandboxOrigin | undefined,
  ): Promise<SandboxRecord> {
    const volumeMounts = await this.resolveVolumes(request.volumeMounts ?? [], teamID);
    // Catalog servers run from OCI images: their filesystems as read-only layers above the template's.
    const { layers: imageLayers, attach, release: releaseImages } = await this.heldImageLayers(request.mcp, resolved.layers);
    try {
      return await this.createWith(request, teamID, egress, resolved, origin, volumeMounts, imageLayers, attach);
    } finally {
      releaseImages();
    }
  }

  /**
   * The MCP servers' images a create's `mcp` asks for that the template lacks: to attach after the create answered
   * (`attach`), or, where the runtime cannot, their layers, held against the storage collector until the create ends
   * (its record names them by then), made again if the collector took one first.
   */
  private async heldImageLayers(
    mcp: unknown,
    templateLayers: readonly string[],
  ): Promise<{ layers: string[]; attach: string[]; release: Release }> {
    if (mcp === undefined || !this.o.mcpImages) return { layers: [], attach: [], release: () => undefined };
    if (this.attacher?.enabled) return { layers: [], attach: this.o.mcpImages.missing(mcp, templateLayers), release: () => undefined };
    for (let tries = 0; tries < 3; tries++) {
      const layers = await this.o.mcpImages.layers(mcp, templateLayers);
      const release = this.o.holds ? await this.o.holds.claim(layers) : () => undefined;
      if (release) return { layers, attach: [], release };
    }
    throw new ApiError(503, "the MCP servers' images were removed while they were placed; try again");
  }

  private async createWith(
    request: NewSandbox,
    teamID: string,
    egress: EgressRequest,
    resolved: TemplateForSandbox,
    origin: SandboxOrigin | undefined,
    volumeMounts: Awaited<ReturnType<SandboxService['resolveVolumes']>>,
    imageLayers: string[],
    attach: string[],
  ): Promise<SandboxRecord> {
    const template = imageLayers.length > 0 ? { ...resolved, layers: [...imageLayers, ...resolved.layers] } : resolved;
    const onlyTo = this.onlyToFor(template);
    this.checkCanEnforce(egress, onlyTo);
    const now = this.now();
    const recordFor = (sandboxID: string): SandboxRecord => ({
      sandboxID,
      teamID,
      templateID: template.templateID,
      alias: template.alias,
      buildID: template.buildID,
      envdAccessToken: newEnvdAccessToken(sandboxID),
      ...(request.network?.allowPublicTraffic === false ? { trafficAccessToken: newAccessToken() } : {}),
      ...(request.network?.httpsPorts?.length ? { httpsPorts: request.network.httpsPorts } : {}),
      ...(request.network?.maskRequestHost !== undefined ? { maskRequestHost: request.network.maskRequestHost } : {}),
      ...(Object.keys(egress).length > 0 ? { egress } : {}),
      ...(onlyTo ? { egressOnlyTo: onlyTo } : {}),
      state: 'creating',
      startedAt: iso(now),
      endAt: iso(now + request.timeout * 1000),
      cpuCount: template.cpuCount,
      memoryMB: template.memoryMB,
      ...this.diskOf(template),
      metadata: request.metadata,
      envVars: request.envVars,
      templateEnvs: template.envs,
      autoPause: request.autoPause,
      ...(request.autoPauseMemory === false ? { autoPauseMemory: false } : {}),
      autoResume: request.autoResume?.enabled ?? false,
      agentPort: this.agentPort,
      defaultUser: template.user,
      defaultWorkdir: template.workdir,
      layers: template.layers,
      ...(template.startCmd !== undefined ? { startCmd: template.startCmd } : {}),
      ...(template.readyCmd !== undefined ? { readyCmd: template.readyCmd } : {}),
      ...(volumeMounts.length > 0 ? { volumeMounts } : {}),
      ...(attach.length > 0 || template.attachedImages?.length ? { attachedImages: carriedImages(template, attach) } : {}),
    });
    const t0 = performance.now();
    // A create the pool can serve: the template's own files and nothing bound in at container start.
    const poolable =
      origin === undefined &&
      volumeMounts.length === 0 &&
      imageLayers.length === 0 &&
      attach.length === 0 &&
      !template.attachedImages?.length &&
      !template.fromSandboxFiles &&
      egress.rules === undefined;
    for (;;) {
      // A take's phases run from here (the quota hold, /init); a cold create's from its lock, as before pools.
      const takeClock = new PhaseClock('create', this.o.observer, t0);
      const taken = poolable ? await this.takeFromPool(template, recordFor, takeClock) : undefined;
      const record = taken?.record ?? recordFor(newSandboxID());
      // Before anything is made: a full host's or a quota's 429 leaves nothing behind.
      if (!taken) {
        this.refuseWithoutRoom(template, `cannot create sandbox ${record.sandboxID}`);
        await this.reserve(record);
      }
      const made = await this.makeRunning(record, template, request, origin, t0, taken && { pooled: taken.pooled, clock: takeClock });
      if (made) return made;
      // A pooled sandbox whose agent did not take the create's /init was removed: the next one, or a cold start.
    }
  }

  /**
   * Brings the sandbox of a record (held of its team's quota) up, or takes over the pooled one, under its lock; on
   * failure everything of it is removed. Undefined when a pooled sandbox's agent did not take the /init.
   */
  private async makeRunning(
    record: SandboxRecord,
    template: TemplateForSandbox,
    request: NewSandbox,
    origin: SandboxOrigin | undefined,
    t0: number,
    taken: { pooled: PooledSandbox; clock: PhaseClock } | undefined,
  ): Promise<SandboxRecord | undefined> {
    const id = record.sandboxID;
    const abort = new AbortController();
    this.creating.set(id, abort);
    try {
      return await this.lock.run(id, async () => {
        // A cold create's `creating` record lets the next start remove what a crash half-made. A taken sandbox needs
        // none: its container exists already, and a start finds a container no record knows and removes it.
        if (!taken) await this.o.store.put(record);
        // Its images are pulled meanwhile; they are attached once the create is done (under this lock).
        this.attacher?.start(record);
        const clock = taken?.clock ?? new PhaseClock('create', this.o.observer);
        const from = taken ? ' (from the warm pool)' : '';
        this.note(
          id,
          'info',
          `creating the sandbox from template ${template.alias ?? template.templateID} (build ${template.buildID})${from}`,
        );
        try {
          if (taken) await this.takeOver(record, template, taken.pooled, abort.signal, clock);
          else await this.bringUp(record, template, abort.signal, clock, origin?.changesFrom);
          await this.attacher?.place(record);
          // Made from a sandbox's files (a fork, a snapshot): what was launched there runs again.
          if (origin?.changesFrom !== undefined || template.fromSandboxFiles) {
            await this.startMcpGatewayAgain(record);
            clock.step('mcp-gateway');
          }
          clock.done('ok');
          const steps = clock.took.join(', ');
          const ms = Math.round(performance.now() - t0);
          this.note(id, 'info', `sandbox ready in ${ms} ms${from} (${steps})`);
          this.log(
            `sandbox ${id} running (template ${template.alias ?? template.templateID}${taken ? ', from the warm pool' : ''}, ready in ${ms} ms: ${steps})`,
          );
        } catch (err) {
          const gone = err instanceof PooledAgentGone && !abort.signal.aborted;
          if (!gone) clock.done('error');
          await this.destroy(record, gone ? `its agent did not take a create's /init: ${err.message}` : 'its create failed');
          if (gone) return undefined;
          if (err instanceof ApiError) throw err;
          if (err instanceof AdmissionError) throw new ApiError(429, err.message);
          if (abort.signal.aborted) throw new ApiError(503, 'the platform shut down while the sandbox was being created');
          throw new ApiError(
            500,
            `could not start a sandbox from template ${JSON.stringify(request.templateID)}: ${(err as Error).message}`,
          );
        }
        return record;
      });
    } finally {
      this.creating.delete(id);
    }
  }

  private async resolveVolumes(mounts: Array<{ name: string; path: string }>, teamID: string): Promise<VolumeMount[]> {
    if (mounts.length === 0) return [];
    if (!this.o.volumes) throw new ApiError(400, 'volumeMounts: this platform has no volume store; leave them out');
    return this.o.volumes.resolve(mounts, teamID);
  }

  /** Each step is timed on `clock`. */
  private async bringUp(
    record: SandboxRecord,
    template: TemplateForSandbox,
    signal: AbortSignal,
    clock: PhaseClock,
    changesFrom?: string,
  ): Promise<void> {
    const id = record.sandboxID;
    const step = (name: string) => clock.step(name);
    // Its CA before its rules and its container: the relay signs with it, the sandbox trusts it from its start.
    if (record.egress?.rules && this.o.transforms) {
      record.egressCa = await prepareEgressCa(this.o.transforms, id, template.layers);
      step('egress-ca');
    }
    // Before the sandbox runs: nothing of it ever leaves without its rules (loaded with the attachment's own).
    const network = await this.o.network.attach(id, this.policyOf(record));
    step('network');
    // Not stored yet: a crash from here on leaves a `creating` record, removed by ID on the next start.
    record.address = network.address;
    signal.throwIfAborted();
    await this.createMakingRoom(
      { ...containerSpec(record, template, network), ...(changesFrom !== undefined ? { changesFrom } : {}) },
      template,
    );
    step('container');
    signal.throwIfAborted();
    const agent = this.agentFor(record);
    await agent.waitForHealth(this.healthTimeoutMs, signal);
    step('agent');
    await agent.init(this.initRequest(record), record.envdAccessToken);
    step('init');
    await this.goLive(record, template, signal, clock);
  }

  /**
   * A sandbox taken from the warm pool becomes this create's: its /init (authorised by the pool's token) gives it the
   * create's token, env vars and user, and its egress rules are loaded before anything of the caller's runs in it
   * (the template's start command, then the caller's calls). Without a start command the record is final once the
   * /init is done: it is written meanwhile (its wait for Redis's fsync overlaps the /init), under the create's lock,
   * after the quota hold; a failed /init removes it with the sandbox (PooledAgentGone).
   */
  private async takeOver(
    record: SandboxRecord,
    template: TemplateForSandbox,
    pooled: PooledSandbox,
    signal: AbortSignal,
    clock: PhaseClock,
  ): Promise<void> {
    this.note(record.sandboxID, 'info', `taken from the warm pool, where it waited ${Math.max(0, this.now() - pooled.readyAt)} ms`);
    const early = template.startCmd === undefined;
    if (early) record.state = 'running';
    const [init, stored] = await Promise.allSettled([
      this.agentFor(record).init(this.initRequest(record), pooled.token, POOL_INIT_TIMEOUT_MS),
      early ? this.o.store.put(record) : undefined,
    ]);
    if (stored.status === 'rejected') throw stored.reason;
    if (init.status === 'rejected') throw new PooledAgentGone((init.reason as Error).message);
    clock.step(early ? 'init+store' : 'init');
    if (this.policyOf(record) !== undefined) {
      await this.enforceEgress(record);
      clock.step('policy');
    }
    signal.throwIfAborted();
    await this.goLive(record, template, signal, clock, early);
  }

  /**
   * The template's start command, then running in the store (unless `stored`: the running record was written) and
   * the catalog, and its timer armed.
   */
  private async goLive(
    record: SandboxRecord,
    template: TemplateForSandbox,
    signal: AbortSignal,
    clock: PhaseClock,
    stored = false,
  ): Promise<void> {
    if (template.startCmd !== undefined) {
      await this.runStartCommand(record, template, this.agentFor(record), signal);
      clock.step('start+ready');
    }
    signal.throwIfAborted();
    if (!stored) {
      record.state = 'running';
      await this.o.store.put(record);
    }
    await this.publish(record);
    this.deadlines.arm(record.sandboxID, Date.parse(record.endAt));
    clock.step(stored ? 'catalog' : 'store+catalog');
  }

  private initRequest(record: SandboxRecord) {
    return {
      accessToken: record.envdAccessToken,
      // The template's ENV first, the caller's envVars over them (as E2B does).
      envVars: { ...record.egressCa?.env, ...record.templateEnvs, ...record.envVars },
      defaultUser: record.defaultUser,
      ...(record.defaultWorkdir !== undefined ? { defaultWorkdir: record.defaultWorkdir } : {}),
    };
  }

  /**
   * After its processes were started again from its files (a resume from disk, a fork, a snapshot's sandbox): the
   * MCP gateway launched in it runs again (mcp-gateway-restart.ts); its log says so, or why not.
   */
  private async startMcpGatewayAgain(record: SandboxRecord): Promise<void> {
    const result = await restartMcpGateway(this.agentFor(record), record.envdAccessToken);
    if (result === undefined) return;
    if (result.ok) this.note(record.sandboxID, 'info', `the MCP gateway was started again: ${result.said}`);
    else this.note(record.sandboxID, 'error', `the MCP gateway could not be started again: ${result.said}`);
  }

  /** Starts the template's start command, then polls its ready command until it exits 0. */
  private async runStartCommand(
    record: SandboxRecord,
    template: TemplateForSandbox,
    agent: AgentClient,
    signal: AbortSignal,
  ): Promise<void> {
    const token = record.envdAccessToken;
    const startCmd = template.startCmd as string;
    const id = record.sandboxID;
    const splitters = new Map<string, LineSplitter>();
    const splitter = (stream: string) => {
      let s = splitters.get(stream);
      if (!s) {
        s = new LineSplitter((line) => this.note(id, stream === 'stderr' ? 'warn' : 'info', line, 'start-cmd', { stream }));
        splitters.set(stream, s);
      }
      return s;
    };
    this.note(id, 'info', `starting the start command: ${startCmd}`);
    const proc = agent.start(token, {
      cmd: '/bin/bash',
      args: ['-l', '-c', startCmd],
      user: template.user,
      cwd: template.workdir,
      tag: 'start-cmd',
      onOutput: (stream, text) => splitter(stream).push(text),
    });
    this.startCommands.set(id, proc);
    let ended: { exitCode: number; error?: string; outputTail: string } | Error | undefined;
    proc.done.then(
      (r) => {
        ended = r;
        for (const s of splitters.values()) s.flush();
        this.note(
          id,
          r.exitCode === 0 ? 'info' : 'error',
          `the start command exited with code ${r.exitCode}${r.error ? ` (${r.error})` : ''}`,
        );
      },
      (err: Error) => {
        ended = err;
        for (const s of splitters.values()) s.flush();
      },
    );
    await proc.started;
    if (template.readyCmd === undefined) return;
    const deadline = this.now() + this.readyTimeoutMs;
    let last = '';
    while (true) {
      signal.throwIfAborted();
      if (isProcessResult(ended) && ended.exitCode !== 0) {
        throw new ApiError(
          500,
          `the template's start command ${JSON.stringify(startCmd)} exited with code ${ended.exitCode} before the sandbox was ready${ended.error ? ` (${ended.error})` : ''}${tail(ended.outputTail)}`,
        );
      }
      const left = deadline - this.now();
      if (left <= 0) {
        throw new ApiError(
          500,
          `the template's ready command ${JSON.stringify(template.readyCmd)} did not succeed within ${this.readyTimeoutMs} ms${last ? ` (last: ${last})` : ''}`,
        );
      }
      // One attempt may last until the deadline: the SDK's waitForTimeout(ms) is `sleep <seconds>`, and a Dockerfile's
      // CMD comes with `sleep 20`.
      const result = await agent
        .run(token, template.readyCmd, { user: template.user, cwd: template.workdir, timeoutMs: left })
        .catch((err: unknown) => err);
      if (result instanceof CommandStillRunning) {
        // Stopped at the deadline, it says nothing about the command: what the last finished attempt said stays.
        last ||= result.message;
      } else if (!isProcessResult(result)) {
        // Not `instanceof Error`: fetch's errors come from Node's own realm, which is not always the caller's.
        last = String((result as { message?: unknown })?.message ?? result);
      } else if (result.exitCode === 0) {
        return;
      } else {
        last = `exit code ${result.exitCode}${tail(result.outputTail)}`;
      }
      await sleep(READY_POLL_MS);
    }
  }

  private async publish(record: SandboxRecord): Promise<void> {
    if (record.state === 'creating' || record.address === undefined) return;
    await this.o.catalog.upsert({
      sandboxID: record.sandboxID,
      host: record.address,
      agentPort: record.agentPort,
      tokenHash: hashAccessToken(record.envdAccessToken),
      state: record.state,
      autoResume: record.autoResume,
      ...(this.o.hostID !== undefined ? { hostID: this.o.hostID } : {}),
      ...(record.trafficAccessToken !== undefined ? { trafficTokenHash: hashAccessToken(record.trafficAccessToken) } : {}),
      ...(record.httpsPorts !== undefined ? { httpsPorts: record.httpsPorts } : {}),
      ...(record.maskRequestHost !== undefined ? { maskRequestHost: record.maskRequestHost } : {}),
    });
  }

  async get(sandboxID: string): Promise<SandboxRecord> {
    const record = await this.o.store.get(sandboxID);
    if (!record || record.state === 'creating') throw sandboxNotFound(sandboxID);
    return record;
  }

  async all(): Promise<SandboxRecord[]> {
    return this.o.store.all();
  }

  /**
   * Freezes it in memory, or (`disk`) stops its processes and keeps only its files, which frees its memory and CPU;
   * a memory-paused sandbox can still be moved to disk. 409 when it is already paused that way.
   */
  pause(sandboxID: string, kind: PauseKind = 'memory'): Promise<SandboxRecord> {
    return this.lock.run(sandboxID, async () => {
      const record = await this.get(sandboxID);
      if (record.state === 'paused' && (kind === 'memory' || record.pausedTo === 'disk'))
        throw new ApiError(409, `sandbox ${JSON.stringify(sandboxID)} is already paused`);
      if (kind === 'disk') {
        await this.stopToDisk(record);
        return record;
      }
      const clock = new PhaseClock('pause', this.o.observer);
      try {
        await this.o.runtime.pause(sandboxID);
        clock.step('freeze');
        record.state = 'paused';
        record.pausedTo = 'memory';
        record.pausedAt = iso(this.now());
        await this.o.store.put(record);
        await this.o.catalog.setState(sandboxID, 'paused');
        this.armPaused(record);
        clock.step('store+catalog');
      } catch (err) {
        clock.done('error');
        throw err;
      }
      clock.done('ok');
      this.note(sandboxID, 'info', 'sandbox paused');
      return record;
    });
  }

  /** Its processes end and its memory is freed; its filesystem changes stay with the runtime. Under the lock. */
  private async stopToDisk(record: SandboxRecord): Promise<void> {
    const id = record.sandboxID;
    if (record.layers === undefined)
      throw new ApiError(409, `sandbox ${JSON.stringify(id)} was created by an older platform and can only be paused in memory`);
    this.startCommands.get(id)?.abort();
    this.startCommands.delete(id);
    if (record.state !== 'paused') record.pausedAt = iso(this.now());
    await this.o.runtime.stop(id);
    await this.o.network.detach(id);
    record.state = 'paused';
    record.pausedTo = 'disk';
    await this.o.store.put(record);
    await this.o.catalog.setState(id, 'paused');
    this.armPaused(record);
    this.log(`sandbox ${id} paused to disk`);
  }

  private armPaused(record: SandboxRecord): void {
    this.deadlines.arm(record.sandboxID, nextPausedEvent(record, this.paused).atMs);
  }

  /** What the template gave this sandbox, for its reboot, a snapshot or a fork. */
  templateOf(record: SandboxRecord): TemplateForSandbox {
    if (record.layers === undefined)
      throw new ApiError(409, `sandbox ${JSON.stringify(record.sandboxID)} was created by an older platform: its files cannot be copied`);
    return {
      templateID: record.templateID,
      ...(record.alias !== undefined ? { alias: record.alias } : {}),
      buildID: record.buildID ?? '',
      layers: record.layers,
      memoryMB: record.memoryMB,
      cpuCount: record.cpuCount,
      ...(record.diskSizeMB !== undefined ? { diskSizeMB: record.diskSizeMB } : {}),
      ...(record.startCmd !== undefined ? { startCmd: record.startCmd } : {}),
      ...(record.readyCmd !== undefined ? { readyCmd: record.readyCmd } : {}),
      envs: record.templateEnvs,
      user: record.defaultUser,
      ...(record.defaultWorkdir !== undefined ? { workdir: record.defaultWorkdir } : {}),
      ...(record.attachedImages?.length ? { attachedImages: record.attachedImages } : {}),
    };
  }

  /** Copies the sandbox's filesystem changes as they are now to `target` (a new directory); it keeps its state. */
  copyChanges(sandboxID: string, target: string): Promise<SandboxRecord> {
    return this.lock.run(sandboxID, async () => {
      const record = await this.get(sandboxID);
      this.templateOf(record);
      await this.o.runtime.copyChanges(sandboxID, target);
      return record;
    });
  }

  /**
   * Resumes a paused sandbox (resumed: true), or extends a running one's time when `timeout` reaches further
   * (resumed: false). Either way it then lives at least `timeoutSeconds` from now.
   */
  connect(
    sandboxID: string,
    timeoutSeconds: number,
    options: { mustBePaused?: boolean; autoPause?: boolean; reboot?: boolean } = {},
  ): Promise<{ record: SandboxRecord; resumed: boolean }> {
    return this.lock.run(sandboxID, async () => {
      const record = await this.get(sandboxID);
      const wanted = this.now() + timeoutSeconds * 1000;
      if (record.state === 'running') {
        if (options.mustBePaused) throw new ApiError(409, `sandbox ${JSON.stringify(sandboxID)} is already running`);
        if (wanted > Date.parse(record.endAt)) {
          record.endAt = iso(wanted);
          await this.o.store.put(record);
          this.deadlines.arm(sandboxID, wanted);
        }
        return { record, resumed: false };
      }
      const clock = new PhaseClock('resume', this.o.observer);
      try {
        // A reboot drops what a memory-paused sandbox held in RAM and starts it from its files.
        if (options.reboot && record.pausedTo !== 'disk') await this.stopToDisk(record);
        if (record.pausedTo === 'disk') {
          await this.reboot(record);
          clock.step('reboot');
        } else {
          await this.o.runtime.resume(sandboxID);
          clock.step('thaw');
          const agent = this.agentFor(record);
          await agent.waitForHealth(this.healthTimeoutMs).catch((err: Error) => {
            throw new ApiError(500, `sandbox ${JSON.stringify(sandboxID)} was resumed but its agent does not answer: ${err.message}`);
          });
          clock.step('agent');
          await agent.init(this.initRequest(record), record.envdAccessToken);
          clock.step('init');
        }
        record.state = 'running';
        delete record.pausedTo;
        delete record.pausedAt;
        record.endAt = iso(wanted);
        if (options.autoPause !== undefined) record.autoPause = options.autoPause;
        await this.o.store.put(record);
        await this.publish(record);
        this.deadlines.arm(sandboxID, wanted);
        clock.step('store+catalog');
      } catch (err) {
        clock.done('error');
        throw err;
      }
      clock.done('ok');
      this.note(sandboxID, 'info', 'sandbox resumed');
      return { record, resumed: true };
    });
  }

  /**
   * Starts a disk-paused sandbox again from its files: a network attachment, a container over its kept changes,
   * the agent's init with its token and env vars, the template's start command. A failure leaves it paused on disk:
   * a host that cannot take it now answers 429, any other failure 500.
   */
  private async reboot(record: SandboxRecord): Promise<void> {
    const id = record.sandboxID;
    const template = this.templateOf(record);
    const what = `sandbox ${JSON.stringify(id)} could not be started again from its files`;
    this.refuseWithoutRoom(template, what);
    try {
      const network = await this.o.network.attach(id, this.policyOf(record));
      record.address = network.address;
      if (record.volumeMounts?.length) await this.o.volumes?.ready(record.volumeMounts);
      await this.createMakingRoom({ ...containerSpec(record, template, network), restart: true }, template);
      // Its attached images again (what they wrote is gone with the container), and any pull cut short.
      await this.attacher?.place(record);
      this.attacher?.start(record);
      const agent = this.agentFor(record);
      await agent.waitForHealth(this.healthTimeoutMs);
      await agent.init(this.initRequest(record), record.envdAccessToken);
      if (template.startCmd !== undefined) await this.runStartCommand(record, template, agent, new AbortController().signal);
      await this.startMcpGatewayAgain(record);
    } catch (err) {
      this.startCommands.get(id)?.abort();
      this.startCommands.delete(id);
      await this.o.runtime.stop(id).catch(() => undefined);
      await this.o.network.detach(id).catch(() => undefined);
      throw new ApiError(err instanceof AdmissionError ? 429 : 500, `${what}: ${(err as Error).message}`);
    }
  }

  /** Moves the end to `timeoutSeconds` from now (earlier or later). */
  setTimeout(sandboxID: string, timeoutSeconds: number): Promise<SandboxRecord> {
    return this.lock.run(sandboxID, async () => {
      const record = await this.get(sandboxID);
      const endAt = this.now() + timeoutSeconds * 1000;
      record.endAt = iso(endAt);
      await this.o.store.put(record);
      if (record.state === 'running') this.deadlines.arm(sandboxID, endAt);
      return record;
    });
  }

  kill(sandboxID: string): Promise<void> {
    return this.lock.run(sandboxID, async () => {
      const record = await this.get(sandboxID);
      await this.destroy(record, 'killed');
    });
  }

  /**
   * Removes everything of a sandbox; the record goes last, so a crash half-way leaves it to act on again. The
   * gateway's routing goes first: a caller whose connection the kill ends (the runtime resets them before the network
   * attachment, its address, is released) and who then asks the sandbox's `/health` gets the gateway's 502.
   */
  private async destroy(record: SandboxRecord, why: string): Promise<void> {
    const id = record.sandboxID;
    await this.o.catalog.remove(id);
    this.deadlines.clear(id);
    this.startCommands.get(id)?.abort();
    this.startCommands.delete(id);
    await this.attacher?.stop(id);
    await this.o.runtime.kill(id);
    await this.o.network.detach(id);
    if (this.o.transforms) removeSandboxCa(this.o.transforms, id);
    await this.logWriter?.settled();
    await this.o.logs?.remove(id);
    await this.o.store.delete(id);
    await this.o.quotas?.release(teamOf(record), `sandbox:${id}`);
    this.log(`sandbox ${id} removed (${why})`);
  }

  /**
   * A running sandbox ended without being asked to (runtime.onEnded; under runsc an OOM ends the whole sandbox):
   * everything of it is removed (its routing first, destroy) and the platform's log says why; the runtime resets its
   * connections in the kill, or once this returns without one. A pooled sandbox is left to the pool's check.
   */
  private async ended(sandboxID: string, why: string): Promise<void> {
    if (this.closed) return;
    try {
      await this.lock.run(sandboxID, async () => {
        const record = await this.o.store.get(sandboxID);
        if (record?.state !== 'running') return;
        await this.destroy(
          record,
          why === 'out of memory' ? `it ran out of memory: its limit is ${record.memoryMB} MB` : `it ended by itself: ${why}`,
        );
      });
    } catch (err) {
      this.log(`sandbox ${sandboxID}: removing it after its end failed: ${(err as Error).message}`);
    }
  }

  /** The end time came: pause (auto-pause) or kill; of a paused sandbox: its move to disk, or its retention. */
  private async expire(sandboxID: string): Promise<void> {
    if (this.closed) return;
    try {
      const record = await this.o.store.get(sandboxID);
      if (record?.state === 'paused') return await this.pausedTimer(sandboxID);
      if (record?.state !== 'running') return;
      if (Date.parse(record.endAt) > this.now()) {
        this.deadlines.arm(sandboxID, Date.parse(record.endAt));
        return;
      }
      if (record.autoPause) {
        await this.pause(sandboxID, record.autoPauseMemory === false ? 'disk' : 'memory');
        this.log(`sandbox ${sandboxID} paused: its timeout passed`);
      } else {
        await this.lock.run(sandboxID, async () => {
          const current = await this.o.store.get(sandboxID);
          if (current && current.state === 'running' && Date.parse(current.endAt) <= this.now())
            await this.destroy(current, 'its timeout passed');
        });
      }
    } catch (err) {
      this.log(`sandbox ${sandboxID}: acting on its timeout failed: ${(err as Error).message}`);
    }
  }

  private async pausedTimer(sandboxID: string): Promise<void> {
    await this.lock.run(sandboxID, async () => {
      const record = await this.o.store.get(sandboxID);
      if (record?.state !== 'paused') return;
      const next = nextPausedEvent(record, this.paused);
      if (next.atMs > this.now()) return this.armPaused(record);
      if (next.action === 'kill') return this.destroy(record, 'it was paused longer than the retention');
      await this.stopToDisk(record);
    });
  }

  /**
   * After a (re)start: the store, the runtime and the network are compared. Sandboxes alive in all three are
   * published to the catalog and their timers re-armed; half-made or dead ones are removed; containers and network
   * attachments no record knows are leftovers of this instance and are removed too.
   */
  async reconcile(): Promise<{ kept: string[]; removed: string[] }> {
    const [records, containers, attachments] = await Promise.all([this.o.store.all(), this.o.runtime.list(), this.o.network.list()]);
    const byID = new Map(containers.map((c) => [c.sandboxID, c]));
    const kept: string[] = [];
    const removed: string[] = [];
    for (const record of records) {
      const id = record.sandboxID;
      const container = byID.get(id);
      const attached = attachments.get(id);
      // A paused sandbox whose container is gone (a host reboot) still has its files: it is paused on disk now.
      if (record.state === 'paused' && !container && record.layers !== undefined && this.o.runtime.hasChanges(id)) {
        if (record.pausedTo !== 'disk') {
          record.pausedTo = 'disk';
          await this.o.store.put(record);
        }
        if (attached) await this.o.network.detach(id);
        await this.publish(record);
        this.armPaused(record);
        this.attacher?.start(record);
        kept.push(id);
        continue;
      }
      if (record.state === 'creating' || !container || container.state === 'stopped' || !attached || attached.address === '') {
        await this.destroy(record, record.state === 'creating' ? 'the platform stopped during its create' : 'it was no longer running');
        removed.push(id);
        continue;
      }
      if (container.state !== record.state || record.address !== attached.address) {
        record.state = container.state;
        record.address = attached.address;
        await this.o.store.put(record);
      }
      // Its end is watched again where the runtime watches one (runsc: an OOM ends the whole sandbox).
      await this.o.runtime.adopt?.(id, record.address);
      // The rules live in the network namespace and survive a restart; loading them again costs little and repairs.
      await this.enforceEgress(record);
      await this.publish(record);
      if (record.state === 'running') this.deadlines.arm(id, Date.parse(record.endAt));
      else this.armPaused(record);
      // Pulls the last platform process had under way.
      this.attacher?.start(record);
      kept.push(id);
    }
    const known = new Set(kept);
    for (const container of containers) {
      if (known.has(container.sandboxID) || removed.includes(container.sandboxID)) continue;
      await this.o.runtime.kill(container.sandboxID);
      removed.push(container.sandboxID);
      this.log(`leftover container ${container.sandboxID} removed`);
    }
    for (const id of attachments.keys()) {
      if (known.has(id)) continue;
      await this.o.network.detach(id);
      if (!removed.includes(id)) {
        removed.push(id);
        this.log(`leftover network attachment ${id} removed`);
      }
    }
    return { kept, removed };
  }

  /** The local system's shutdown: running sandboxes are killed, paused ones kept on disk for the next start. */
  async killAll(): Promise<void> {
    for (const record of await this.o.store.all()) {
      await this.lock.run(record.sandboxID, async () => {
        if (record.state === 'paused' && record.layers !== undefined) {
          if (record.pausedTo !== 'disk') await this.stopToDisk(record);
        } else await this.destroy(record, 'the platform shut down');
      });
    }
  }

  /** Sandboxes that hold memory and CPU now (a host's capacity counts these). */
  async running(): Promise<number> {
    return (await this.o.store.all()).filter((r) => r.pausedTo !== 'disk').length;
  }

  /** Stops timers and creates under way; sandboxes keep running for the next start to find. */
  async close(): Promise<void> {
    this.closed = true;
    this.deadlines.clearAll();
    for (const abort of this.creating.values()) abort.abort();
    // Creates under way clean up after themselves; wait for them through their locks.
    await Promise.all([...this.creating.keys()].map((id) => this.lock.run(id, async () => {})));
    // Pooled sandboxes belong to nobody: removed, not kept for the next start.
    await this.pool?.close();
    for (const proc of this.startCommands.values()) proc.abort();
    this.startCommands.clear();
    await this.attacher?.close();
  }
}

function isProcessResult(value: unknown): value is ProcessResult {
  return typeof value === 'object' && value !== null && typeof (value as ProcessResult).exitCode === 'number';
}

function tail(output: string): string {
  const text = output.trim().split('\n').slice(-5).join(' | ');
  return text ? `; last output: ${text.slice(-500)}` : '';
}

/** What the runtime is given for a sandbox, on create, for the warm pool and on a reboot from disk alike. */
function containerSpec(
  record: Pick<SandboxRecord, 'sandboxID' | 'envdAccessToken' | 'volumeMounts' | 'diskSizeMB' | 'attachedImages' | 'egressCa'>,
  template: { layers: string[]; memoryMB: number; cpuCount: number },
  network: SandboxSpec['network'],
): SandboxSpec {
  return {
    sandboxID: record.sandboxID,
    layers: template.layers,
    memoryMB: template.memoryMB,
    cpuCount: template.cpuCount,
    ...(record.diskSizeMB !== undefined ? { diskMB: record.diskSizeMB } : {}),
    network,
    accessToken: record.envdAccessToken,
    ...(record.volumeMounts?.length ? { volumes: record.volumeMounts.map((m) => ({ source: m.source, target: m.path })) } : {}),
    ...(record.egressCa ? { readOnlyFiles: record.egressCa.binds } : {}),
    ...chrootDirsOf(template.layers),
    ...(record.attachedImages?.length ? { attachDir: ATTACHED_IMAGES_DIR } : {}),
  };
}

/** The MCP image filesystems in the layers, for a /dev of their own (mcp-images.ts). */
function chrootDirsOf(layers: readonly string[]): { chrootDirs?: string[] } {
  const dirs = mcpImageRoots(layers);
  return dirs.length > 0 ? { chrootDirs: dirs } : {};
}
