import type { StackConfig } from '../config';
import { jsonFile } from './json';

/** ss-server's config file. Holds the password: written 0600. */
export function renderServerConfig(proxy: StackConfig['proxy'], password: string): string {
  return jsonFile({
    server: proxy.listenAddress,
    server_port: proxy.port,
    password,
    method: proxy.method,
    mode: proxy.mode,
    timeout: proxy.timeout,
    fast_open: proxy.fastOpen,
  });
}
