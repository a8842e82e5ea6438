import type { StackConfig } from '../config';

/** Kernel settings of the proxy host (docs/design.md#proxy-host), plus TCP Fast Open when the server uses it. */
export function sysctlSettings(proxy: StackConfig['proxy']): Record<string, string> {
  const settings: Record<string, string> = {
    'net.ipv4.ip_forward': '1',
    'net.core.default_qdisc': 'fq',
    'net.ipv4.tcp_congestion_control': 'bbr',
  };
  // fast_open in ss-server only takes effect when the kernel allows TFO for clients and servers (bit mask 3).
  if (proxy.fastOpen) settings['net.ipv4.tcp_fastopen'] = '3';
  return settings;
}

export function renderSysctl(proxy: StackConfig['proxy']): string {
  const lines = Object.entries(sysctlSettings(proxy)).map(([k, v]) => `${k}=${v}`);
  return `# sandbox-kit: proxy host kernel settings\n${lines.join('\n')}\n`;
}
