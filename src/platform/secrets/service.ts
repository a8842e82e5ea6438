/**
 * Secrets: named values a team stores once and its sandboxes' egress rules refer to (`${e2b.secrets.NAME}`), resolved
 * on the host at the moment a matching request leaves a sandbox (docs/secrets.md). Each belongs to its team; another
 * team's secret is as unknown as a missing one. A value is written (sealed) and read back only by `resolve`, for the
 * egress relay: no answer of the API, no log line and no error carries it.
 */
import { LOWER_ALNUM, randomText } from '../../util/random-text';
import { type PagePosition, pageOf } from '../http/page-token';
import { ApiError } from '../http/types';
import { KeyedLock } from '../sandboxes/keyed-lock';
import { type Caller, mayAct } from '../teams/model';
import { canonicalSecretName, SECRET_ID_PREFIX } from './requests';
import type { SecretSealer } from './sealer';
import type { SecretRecord, SecretStore } from './store';

export function secretNotFound(ref: string): ApiError {
  return new ApiError(404, `secret ${JSON.stringify(ref)} not found`);
}

/** The context a value is sealed under: moving a sealed value to another secret or version breaks it. */
const contextOf = (r: Pick<SecretRecord, 'secretID' | 'currentVersion'>) => `${r.secretID}:${r.currentVersion}`;

const positionOf = (r: SecretRecord): PagePosition => ({ at: r.createdAt, id: r.secretID });

export class SecretService {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly store: SecretStore,
    private readonly sealer: SecretSealer,
    private readonly now: () => number = Date.now,
  ) {}

  async create(name: string, value: string, metadata: Record<string, string> | undefined, teamID: string): Promise<SecretRecord> {
    const at = new Date(this.now()).toISOString();
    const record: SecretRecord = {
      secretID: `${SECRET_ID_PREFIX}${randomText(LOWER_ALNUM, 20)}`,
      name,
      teamID,
      currentVersion: 1,
      metadata: metadata ?? {},
      createdAt: at,
      updatedAt: at,
    };
    if (!(await this.store.add(record, this.sealer.seal(value, contextOf(record)))))
      throw new ApiError(409, `this team has a secret named ${JSON.stringify(name)} already: update it, or choose another name`);
    return record;
  }

  /** By ID (`sec_...`, the caller's team or an admin's) or by name (the caller's team); undefined when unknown. */
  private async find(ref: string, caller: Caller): Promise<SecretRecord | undefined> {
    if (ref.startsWith(SECRET_ID_PREFIX)) {
      const record = await this.store.get(ref);
      return record && mayAct(caller, record.teamID) ? record : undefined;
    }
    const name = canonicalSecretName(ref);
    return name === undefined ? undefined : this.store.byName(caller.teamID, name);
  }

  async get(ref: string, caller: Caller): Promise<SecretRecord> {
    const record = await this.find(ref, caller);
    if (!record) throw secretNotFound(ref);
    return record;
  }

  /** A new version with `value`; the metadata is replaced when given, kept when not. */
  async update(ref: string, value: string, metadata: Record<string, string> | undefined, caller: Caller): Promise<SecretRecord> {
    const found = await this.get(ref, caller);
    return this.lock.run(found.secretID, async () => {
      const current = await this.store.get(found.secretID);
      if (!current) throw secretNotFound(ref);
      const next: SecretRecord = {
        ...current,
        currentVersion: current.currentVersion + 1,
        ...(metadata !== undefined ? { metadata } : {}),
        updatedAt: new Date(this.now()).toISOString(),
      };
      await this.store.put(next, this.sealer.seal(value, contextOf(next)));
      return next;
    });
  }

  /** false when the caller has no such secret. */
  async destroy(ref: string, caller: Caller): Promise<boolean> {
    const record = await this.find(ref, caller);
    if (!record) return false;
    await this.lock.run(record.secretID, () => this.store.delete(record));
    return true;
  }

  /**
   * Deletes every secret of a team that is being deleted (teams/routes.ts): credentials nobody could list, use or
   * destroy any more are not kept. How many there were.
   */
  async destroyTeam(teamID: string): Promise<number> {
    const own = (await this.store.all()).filter((r) => r.teamID === teamID);
    for (const record of own) await this.lock.run(record.secretID, () => this.store.delete(record));
    return own.length;
  }

  /** One page of the caller's secrets, oldest first, and the token of the next page when there is one. */
  async list(caller: Caller, limit: number, nextToken?: string): Promise<{ page: SecretRecord[]; nextToken?: string }> {
    const own = (await this.store.all()).filter((r) => r.teamID === caller.teamID);
    return pageOf(own, positionOf, { limit, ...(nextToken !== undefined ? { nextToken } : {}) });
  }

  /**
   * The current value of the team's secret `name` (a placeholder's name, as written), for the egress relay at the
   * moment it sends a request; undefined when the team has none of that name.
   */
  async resolve(teamID: string, name: string): Promise<string | undefined> {
    const canonical = canonicalSecretName(name);
    if (canonical === undefined) return undefined;
    const record = await this.store.byName(teamID, canonical);
    const sealed = record ? await this.store.sealedValue(record.secretID) : undefined;
    return record && sealed !== undefined ? this.sealer.open(sealed, contextOf(record)) : undefined;
  }
}
