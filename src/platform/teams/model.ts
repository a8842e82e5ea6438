/**
 * Teams, their keys and their quotas: what each is, what a name or a quota may be (each rule said once, here; it is
 * both the check and the error message), and who a request comes from once its key is known.
 */
import { z } from 'zod';
import { ApiError, type ApiRequest, type Caller, type KeyRole } from '../http/types';

export type { Caller, KeyRole };

/**
 * The team every resource made before teams existed belongs to, and the keys of the key file. A fixed ID, so every
 * host of a fleet and every restart agree on it without asking each other.
 */
export const DEFAULT_TEAM_ID = 'default';
export const DEFAULT_TEAM_NAME = 'default';

/** The team of a stored resource: records written before teams existed have none and are the default team's. */
export function teamOf(resource: { teamID?: string }): string {
  return resource.teamID ?? DEFAULT_TEAM_ID;
}

const NAME_RULE = '1 to 64 characters: letters, digits, ".", "_" and "-", starting with a letter or digit';
/** Team and key names. */
export const nameSchema = z
  .string({ message: `expected a name of ${NAME_RULE}` })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: `expected a name of ${NAME_RULE}` });

const count = (what: string, max: number) =>
  z
    .number({ message: `expected ${what}: a whole number from 0 to ${max}, or null for no limit` })
    .int({ message: `expected ${what}: a whole number from 0 to ${max}, or null for no limit` })
    .min(0, { message: `expected ${what}: a whole number from 0 to ${max}, or null for no limit` })
    .max(max, { message: `expected ${what}: a whole number from 0 to ${max}, or null for no limit` })
    .nullable();

/**
 * A team's limits; null (or absent) is no limit. The first five are held while in use (a running or paused sandbox
 * holds one sandbox, its vCPUs and its MiB; a build holds one build until it ends; stored bytes are held until the
 * template is deleted); the others bound a single request.
 */
export const quotaSchema = z
  .object({
    sandboxes: count('concurrent sandboxes', 100_000),
    vcpus: count('total vCPUs of the team’s sandboxes', 1_000_000),
    memoryMiB: count('total MiB of the team’s sandboxes', 1_000_000_000),
    builds: count('concurrent template builds', 10_000),
    templateBytes: count('stored bytes (template uploads and layers, snapshots, volumes)', Number.MAX_SAFE_INTEGER),
    maxTimeoutSeconds: count('the longest sandbox timeout in seconds', 31_536_000),
    requestsPerSecond: count('API requests per second per key', 1_000_000),
  })
  .partial()
  .strict();
export type Quotas = z.infer<typeof quotaSchema>;

/** The quotas that are held while in use (reserved and released), as opposed to per-request bounds. */
export const HELD_QUOTAS = ['sandboxes', 'vcpus', 'memoryMiB', 'builds', 'templateBytes'] as const;
export type HeldQuota = (typeof HELD_QUOTAS)[number];
export type Usage = Record<HeldQuota, number>;

/** How each quota is named in messages and on the command line. */
export const QUOTA_LABELS: Record<keyof Required<Quotas>, string> = {
  sandboxes: 'concurrent sandboxes',
  vcpus: 'vCPUs',
  memoryMiB: 'memory MiB',
  builds: 'concurrent builds',
  templateBytes: 'stored bytes',
  maxTimeoutSeconds: 'longest sandbox timeout (seconds)',
  requestsPerSecond: 'requests per second per key',
};

export interface Team {
  teamID: string;
  name: string;
  createdAt: string;
  quotas: Quotas;
}

/** A key as stored: never the key itself, only its sha256 (the record's Redis field). */
export interface KeyRecord {
  keyID: string;
  teamID: string;
  name: string;
  role: KeyRole;
  createdAt: string;
  /** The first characters of the key, so an operator can tell keys apart in a list without the store holding them. */
  mask: string;
  /** 'file': from the key file, replaced at every start; 'issued': made with `sandbox-kit key create`. */
  source: 'file' | 'issued';
}

/** May `caller` see and act on a resource of `teamID`? (Public templates are read-only shared; see their rules.) */
export function mayAct(caller: Pick<Caller, 'teamID' | 'role'>, teamID: string): boolean {
  return caller.role === 'admin' || caller.teamID === teamID;
}

/** The operator acting through a fixed key set or the platform's own code: the default team's admin. */
export function operatorCaller(presentedKey = ''): Caller {
  return { teamID: DEFAULT_TEAM_ID, keyID: 'operator', role: 'admin', quotas: {}, presentedKey };
}

/** The caller of a keyed route (the server always sets it there). */
export function callerOf(req: ApiRequest): Caller {
  if (!req.caller) throw new ApiError(500, 'internal error: a keyed route ran without knowing its caller');
  return req.caller;
}
