import { join } from 'node:path';
import type Redis from 'ioredis';
import type { Route, TemplateResolver } from '../http/types';
import { createTemplateService, type TemplateServiceOptions } from './service';

export type PlatformTemplateOptions = Omit<TemplateServiceOptions, 'redis' | 'dataDir'> & {
  /** Default: <platform state dir>/templates. */
  dataDir?: string;
};

/**
 * The template service as the platform mounts it: given the platform's Redis and state directory, its routes, the
 * resolver sandbox creation uses, and close().
 */
export function templatesForPlatform(o: PlatformTemplateOptions) {
  return async (ctx: {
    redis: Redis;
    stateDir: string;
  }): Promise<{ routes: Route[]; resolver: TemplateResolver; close(): Promise<void> }> => {
    const service = await createTemplateService({ ...o, redis: ctx.redis, dataDir: o.dataDir ?? join(ctx.stateDir, 'templates') });
    return { routes: service.routes(), resolver: service.resolver(), close: () => service.close() };
  };
}
