import type { ClientMode, StackConfig } from '../config';
import { jsonFile } from './json';

export interface ClientTarget {
  /** The proxy's ingress address, what clients dial. */
  serverIp: string;
  password: string;
}

/**
 * The sandbox client's config file; both modes share one shape. Local mode: ss-local serves SOCKS5 on localPort.
 * Transparent mode: ss-redir listens on redirectPort (ss-local still serves 1080 from the local-mode file).
 */
export function renderClientConfig(config: StackConfig, target: ClientTarget, mode: ClientMode): string {
  return jsonFile({
    server: target.serverIp,
    server_port: config.proxy.port,
    password: target.password,
    method: config.proxy.method,
    local_address: config.client.localAddress,
    local_port: mode === 'local' ? config.client.localPort : config.client.redirectPort,
    mode: config.client.mode,
    timeout: config.proxy.timeout,
  });
}
