/** The sandbox catalog: written by the platform, read by the gateway. */
export {
  toCatalogEntry,
  SANDBOX_STATES,
  type CatalogEntry,
  type CatalogEntryInput,
  type SandboxState,
} from './entry';
export type { Catalog, WritableCatalog, ChangeListener } from './types';
export { MemoryCatalog } from './memory';
export { FileCatalog } from './file';
export { parseCatalogFile } from './file-format';
export { RedisCatalog, DEFAULT_REDIS_PREFIX, type RedisCatalogOptions } from './redis';
export { CachedCatalog } from './cached';
export { openCatalog, type OpenCatalogOptions } from './from-spec';
