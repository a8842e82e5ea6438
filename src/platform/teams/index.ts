/**
 * Teams on a platform: the store of teams and keys, the quota ledger, the metrics and the audit trail, all in one
 * Redis (the fleet's shared one in a fleet: keys, quotas and the trail are the fleet's, not a host's).
 */
import type Redis from 'ioredis';
import { AuditLog } from './audit';
import { TeamAuthenticator } from './authenticator';
import { TeamMetrics } from './metrics';
import { QuotaLedger } from './quotas';
import { TeamStore } from './store';

export { DEFAULT_TEAM_ID, teamOf, mayAct, type Caller, type Team, type Quotas } from './model';
export { teamRoutes, type TeamServices } from './routes';
export { callerOf } from './model';

export interface Teams {
  store: TeamStore;
  ledger: QuotaLedger;
  audit: AuditLog;
  metrics: TeamMetrics;
  authenticator: TeamAuthenticator;
}

/** `host`: this platform's name in the ledger (a fleet host's ID), so each host sweeps only its own holds. */
export async function openTeams(redis: Redis, host: string, keyFileKeys: readonly string[]): Promise<Teams> {
  const store = new TeamStore(redis);
  await store.syncFileKeys(keyFileKeys);
  const metrics = new TeamMetrics(redis);
  return {
    store,
    ledger: new QuotaLedger(redis, host, undefined, metrics),
    audit: new AuditLog(redis),
    metrics,
    authenticator: new TeamAuthenticator(store),
  };
}
