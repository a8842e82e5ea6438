/** `POST /admin/gc`: one storage collection now (admin keys only); answers what it removed and the bytes freed. */
import type { Route } from '../http/types';
import type { StorageCollector } from './collector';

export function storageRoutes(collector: StorageCollector): Route[] {
  return [
    {
      method: 'POST',
      path: '/admin/gc',
      auth: 'admin',
      handler: async () => ({ status: 200, body: await collector.collect() }),
    },
  ];
}
