/** Secrets on a platform: store, sealer and service over one Redis (a fleet's shared one), and their routes. */
import type Redis from 'ioredis';
import { loadOrCreateSecretsKey, SecretSealer } from './sealer';
import { SecretService } from './service';
import { SecretStore } from './store';

export { secretRoutes } from './routes';
export { SecretService } from './service';

/** The secrets of a platform, sealed with the key in `keyFile` (made when missing). */
export function openSecrets(redis: Redis, keyFile: string): SecretService {
  return new SecretService(new SecretStore(redis), new SecretSealer(loadOrCreateSecretsKey(keyFile)));
}
