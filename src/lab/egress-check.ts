/**
 * The lab's end-to-end question: which address does the internet see from a sandbox, directly and through the proxy?
 * Answered by the what-is-my-IP service, with curl run inside the namespaces.
 */
import type { RunResult } from './run';
import type { ClientMode } from '../config';

export interface EgressCheck {
  mode: ClientMode;
  /** Who made the direct request (in transparent mode every TCP connection of the sandbox is proxied). */
  directFrom: string;
  direct: string;
  proxied: string;
  expectedEgress: string;
  ok: boolean;
}

export type NodeExec = (node: string, argv: string[]) => Promise<RunResult>;

export function whoamiUrl(address: string, port: number): string {
  return port === 80 ? `http://${address}/` : `http://${address}:${port}/`;
}

/** curl's argv for one request; `socks` sends it through the sandbox's SOCKS5 port. */
export function curlArgv(url: string, socks?: string): string[] {
  return ['curl', '-sS', '--max-time', '5', ...(socks ? ['--socks5-hostname', socks] : []), url];
}

async function ask(exec: NodeExec, node: string, argv: string[]): Promise<string> {
  const result = await exec(node, argv);
  return result.code === 0 ? result.stdout.trim() : `error: ${result.stderr.trim() || `exit ${result.code}`}`;
}

export async function checkEgress(o: {
  exec: NodeExec;
  mode: ClientMode;
  sandbox: string;
  url: string;
  socksPort: number;
  expectedEgress: string;
}): Promise<EgressCheck> {
  const directFrom = o.mode === 'local' ? o.sandbox : 'sbhost';
  const direct = await ask(o.exec, directFrom, curlArgv(o.url));
  const proxied = await ask(o.exec, o.sandbox, o.mode === 'local' ? curlArgv(o.url, `127.0.0.1:${o.socksPort}`) : curlArgv(o.url));
  return {
    mode: o.mode,
    directFrom,
    direct,
    proxied,
    expectedEgress: o.expectedEgress,
    ok: proxied === o.expectedEgress && direct !== o.expectedEgress,
  };
}
