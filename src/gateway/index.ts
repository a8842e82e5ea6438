/** The shared sandbox gateway: routing by header (or host), a catalog of sandboxes, streaming proxy. */
export { startGateway, type RunningGateway } from './server';
export { DEFAULT_LIMITS, type GatewayLimits, type GatewayOptions } from './options';
export type { ResumeSandbox } from './resume';
export { hashAccessToken, accessTokenMatches } from './access-token';
export { decideRoute, routeFromHost, parsePort, parseConnectTimeoutMs, type RouteDecision, type RoutingSettings } from './routing';
export {
  DEFAULT_AGENT_PORT,
  SANDBOX_STATES,
  toCatalogEntry,
  type CatalogEntry,
  type CatalogEntryInput,
  type SandboxState,
} from './catalog/entry';
export type { Catalog, WritableCatalog, ChangeListener } from './catalog/types';
export { MemoryCatalog } from './catalog/memory';
export { FileCatalog } from './catalog/file';
export { parseCatalogFile } from './catalog/file-format';
export { RedisCatalog, DEFAULT_REDIS_PREFIX, type RedisCatalogOptions } from './catalog/redis';
export { CachedCatalog } from './catalog/cached';
export { openCatalog, type OpenCatalogOptions } from './catalog/from-spec';
