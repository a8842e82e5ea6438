import { CachedCatalog } from './cached';
import { FileCatalog } from './file';
import { MemoryCatalog } from './memory';
import { RedisCatalog } from './redis';
import type { Catalog } from './types';

export interface OpenCatalogOptions {
  /** How long a Redis lookup is reused; pub/sub invalidates sooner. */
  cacheTtlMs?: number;
  redisPrefix?: string;
  onError?: (message: string) => void;
  /** A Redis catalog's AUTH password. */
  redisPassword?: string;
}

/** Opens the catalog a `--catalog` value names: `memory`, `file:PATH` or `redis://...` (`rediss://` too). */
export async function openCatalog(spec: string, options: OpenCatalogOptions = {}): Promise<Catalog> {
  if (spec === 'memory') return new MemoryCatalog();
  if (spec.startsWith('file:')) {
    const path = spec.slice('file:'.length);
    if (path === '') throw new Error('--catalog file: needs a path, as in file:/etc/sandbox-kit/catalog.json');
    return FileCatalog.open(path, options.onError);
  }
  if (spec.startsWith('redis://') || spec.startsWith('rediss://')) {
    const redis = await RedisCatalog.open(spec, { prefix: options.redisPrefix, onError: options.onError, password: options.redisPassword });
    return new CachedCatalog(redis, options.cacheTtlMs ?? 2000);
  }
  throw new Error(`--catalog ${JSON.stringify(spec)}: expected memory, file:PATH or redis://HOST:PORT[/DB]`);
}
