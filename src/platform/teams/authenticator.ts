import { API_KEY_PATTERN } from './api-keys';
import type { KeyVerdict } from '../http/types';
import { QUOTA_LABELS } from './model';
import type { TeamStore } from './store';

/**
 * The API server's key check against the team store: which team and key a request comes from, or why not. Each
 * request reads the store (one round trip), so a revoked key or a deleted team is refused at its very next request,
 * on every host that shares the store; the key's request rate is counted in the same round trip.
 */
export class TeamAuthenticator {
  constructor(private readonly store: TeamStore) {}

  async check(presented: string): Promise<KeyVerdict> {
    // A key no platform could have issued (spaces, non-ASCII bytes) matches nothing; hashing would refuse it.
    if (!API_KEY_PATTERN.test(presented)) return { ok: false, status: 401, message: 'the X-API-Key header holds no valid API key' };
    const found = await this.store.authenticate(presented);
    if (!found) return { ok: false, status: 401, message: 'the X-API-Key header holds no valid API key (unknown or revoked)' };
    const limit = found.team.quotas.requestsPerSecond;
    if (limit !== undefined && limit !== null && found.requestsThisSecond > limit) {
      return {
        ok: false,
        status: 429,
        message: `rate limit exceeded: ${QUOTA_LABELS.requestsPerSecond} (requestsPerSecond) is ${limit} for this team; this key sent ${found.requestsThisSecond} this second; try again in a second`,
        headers: { 'retry-after': '1' },
      };
    }
    return {
      ok: true,
      caller: {
        teamID: found.key.teamID,
        keyID: found.key.keyID,
        role: found.key.role,
        quotas: found.team.quotas,
        presentedKey: presented,
      },
    };
  }
}
