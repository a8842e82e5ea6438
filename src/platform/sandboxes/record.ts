/**
 * What the platform keeps about one sandbox (in its store). `creating` is written before anything is made on the
 * host, so a platform that dies half-way through a create finds the half-made sandbox on its next start and removes
 * it; the API never shows `creating` sandboxes.
 */
import type { VolumeMount } from './volume-mounts';
import type { ProxyTarget } from '../../runtime/network/egress-policy';
import type { EgressRequest } from './network-requests';
import type { ImageInfo } from '../../mcp/launch/image-dir';

export type RecordState = 'creating' | 'running' | 'paused';

export interface SandboxRecord {
  sandboxID: string;
  /** The team that made it (absent on records older than teams: the default team's). */
  teamID?: string;
  templateID: string;
  alias?: string;
  buildID?: string;
  /** The plain token: the API hands it back on get and connect; the catalog holds only its hash. */
  envdAccessToken: string;
  /** Set when its ports are not public (`network.allowPublicTraffic: false`): calls to them carry this token. */
  trafficAccessToken?: string;
  /** Its ports that serve HTTPS (`network.httpsPorts`, ascending): the gateway reaches them over TLS. */
  httpsPorts?: number[];
  /** The Host header its services see (`network.maskRequestHost`, as written: the gateway puts the port in). */
  maskRequestHost?: string;
  /** Its egress rules as asked for (canonical CIDRs and domain names); the network enforces them (egressPolicyOf). */
  egress?: EgressRequest;
  /** Its egress CA's trust store binds and variables: made at create when it asked for `network.rules` (egress-transforms.ts). */
  egressCa?: EgressCa;
  /** Made from the stack's proxy template: it reaches only these (the stack's proxy), whatever else is asked. */
  egressOnlyTo?: ProxyTarget[];
  state: RecordState;
  /** ISO-8601 UTC. */
  startedAt: string;
  endAt: string;
  cpuCount: number;
  memoryMB: number;
  /** Its disk (absent on records older than disks, which have none of their own). */
  diskSizeMB?: number;
  metadata: Record<string, string>;
  /** The caller's envVars. */
  envVars: Record<string, string>;
  /** The template's ENV, under the caller's envVars: given to the agent again after a resume. */
  templateEnvs: Record<string, string>;
  /** On timeout: pause (true) or kill (false). */
  autoPause: boolean;
  /** false: the timeout's pause goes to disk (the SDK's `onTimeout: {action: 'pause', keepMemory: false}`). */
  autoPauseMemory?: false;
  /** A paused sandbox is resumed by the gateway on the first request. */
  autoResume: boolean;
  /** Its address on the sandbox network, once attached. */
  address?: string;
  agentPort: number;
  defaultUser: string;
  defaultWorkdir?: string;
  /** The template's layers, start and ready commands as they were at create: a reboot, a snapshot and a fork reuse them. */
  layers?: string[];
  startCmd?: string;
  readyCmd?: string;
  /** Volumes bound read-write into it (kept for its reboot from disk, and so a mounted volume is not destroyed). */
  volumeMounts?: VolumeMount[];
  /**
   * The images of its `mcp`'s catalog servers its template lacked, pulled after its create answered and attached to
   * it (mcp-attach.ts): each one's layers once pulled (the storage collector keeps them), or why it failed.
   */
  attachedImages?: AttachedImage[];
  /** Of a paused sandbox: frozen in memory, or stopped with only its filesystem kept (pause to disk). */
  pausedTo?: PauseKind;
  /** ISO-8601 UTC: when it was paused (for the move to disk and the retention). */
  pausedAt?: string;
}

/** One image a sandbox's `mcp` asked for that its template lacked (mcp-attach.ts). */
export interface AttachedImage {
  ref: string;
  /** Its directory under the sandbox's attach dir (imageKey). */
  key: string;
  /** Once pulled: its layers (topmost first) and what runs. */
  layers?: string[];
  info?: ImageInfo;
  /** Why it could not be fetched. */
  error?: string;
}

export type PauseKind = 'memory' | 'disk';

/** Public states: what the API and the catalog know. */
export type SandboxState = Exclude<RecordState, 'creating'>;

/** What a sandbox with an egress CA is given (egress-transforms.ts): trust store copies bound over the originals, and their variables. */
export interface EgressCa {
  binds: Array<{ source: string; target: string }>;
  env: Record<string, string>;
}
