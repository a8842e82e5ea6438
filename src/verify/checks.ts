import { proxyProtocols, type StackConfig } from '../config';
import { HOST_PATHS, SERVER_OPEN_FILES, sysctlSettings, UNIT_NAME } from '../render';
import {
  bindAddress,
  parseAddresses,
  parseCmdline,
  parseDefaultRouteDevice,
  parseLimit,
  parseListeners,
  parseQdiscKinds,
  parseStat,
  parseSysctl,
  type ListeningSocket,
} from './parse';
import { asRoot, type Remote } from './remote';
import { shellQuote } from '../util/shell-quote';

/** What a healthy proxy host looks like, from the stack config. */
export interface Expectations {
  port: number;
  protocols: Array<'tcp' | 'udp'>;
  sysctls: Record<string, string>;
  maxOpenFiles: string;
  configPath: string;
  /** Permission bits of the server config (it holds the password). */
  configMode: string;
  unit: string;
  /** From the stack config; undefined when no stack was given: the host's own command line decides. */
  egressMode?: 'dedicated' | 'shared';
}

export const MAX_OPEN_FILES = String(SERVER_OPEN_FILES);
const SERVER_PROCESS = 'ss-server';

export function expectationsFor(config: StackConfig, options: { egressModeKnown: boolean }): Expectations {
  const mode = config.proxy.mode;
  return {
    port: config.proxy.port,
    protocols: proxyProtocols(mode),
    sysctls: sysctlSettings(config.proxy),
    maxOpenFiles: MAX_OPEN_FILES,
    configPath: HOST_PATHS.serverConfig,
    configMode: '600',
    unit: UNIT_NAME,
    egressMode: options.egressModeKnown ? config.egress.mode : undefined,
  };
}

export interface CheckResult {
  name: string;
  ok: boolean;
  /** Why it failed, or what was seen when it passed. */
  detail?: string;
}

export function formatResult(result: CheckResult): string {
  return `${result.ok ? 'PASS' : 'FAIL'} ${result.name}${result.detail ? `: ${result.detail}` : ''}`;
}

/** Runs commands on the host as root, remembering how (for messages). Shared by the proxy and sandbox host checks. */
export class HostShell {
  private constructor(
    private readonly remote: Remote,
    readonly isRoot: boolean,
  ) {}

  static async open(remote: Remote): Promise<HostShell> {
    const id = await remote.exec('id -u');
    if (id.code !== 0) throw new Error(`cannot run commands on the host: ${firstLine(id.stderr) || `id -u exited ${id.code}`}`);
    return new HostShell(remote, id.stdout.trim() === '0');
  }

  /** The command's stdout; throws with its stderr when it fails and printed nothing. */
  async run(script: string): Promise<string> {
    const result = await this.remote.exec(asRoot(script, this.isRoot));
    if (result.code !== 0 && result.stdout.trim() === '') {
      const why = firstLine(result.stderr) || `exit status ${result.code}`;
      throw new Error(`\`${script}\` failed${this.isRoot ? '' : ' (through sudo -n)'}: ${why}`);
    }
    return result.stdout;
  }

  /** Like run, but a failure becomes the returned error message. */
  async tryRun(script: string): Promise<{ ok: true; stdout: string } | { ok: false; error: string }> {
    try {
      return { ok: true, stdout: await this.run(script) };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

async function checkSysctls(shell: HostShell, expected: Expectations): Promise<CheckResult[]> {
  const keys = Object.keys(expected.sysctls);
  const read = await shell.tryRun(`sysctl -e ${keys.join(' ')}`);
  const values = read.ok ? parseSysctl(read.stdout) : {};
  const results: CheckResult[] = [];
  for (const key of keys) {
    const want = expected.sysctls[key];
    const name = `sysctl ${key}=${want}`;
    const got = values[key];
    if (got === want) {
      results.push({ name, ok: true });
    } else if (key === 'net.core.default_qdisc') {
      // default_qdisc is one global setting, absent inside a network namespace: there the device's own qdisc counts.
      results.push({ name, ...(await qdiscOnDefaultDevice(shell, want, got ?? 'nothing (not a setting of this network namespace)')) });
    } else {
      results.push({ name, ok: false, detail: got === undefined ? (read.ok ? 'not readable on this host' : read.error) : `reads ${got}` });
    }
  }
  return results;
}

async function qdiscOnDefaultDevice(shell: HostShell, want: string, got: string): Promise<Omit<CheckResult, 'name'>> {
  const route = await shell.tryRun('ip -4 route show default');
  const device = route.ok ? parseDefaultRouteDevice(route.stdout) : undefined;
  if (!device) return { ok: false, detail: `reads ${got}, and there is no default route to check the device's qdisc` };
  const qdiscs = await shell.tryRun(`tc qdisc show dev ${shellQuote(device)}`);
  const kinds = qdiscs.ok ? parseQdiscKinds(qdiscs.stdout) : [];
  return kinds.includes(want)
    ? { ok: true, detail: `reads ${got}, but the default-route device ${device} uses ${want}` }
    : { ok: false, detail: `reads ${got}, and the default-route device ${device} uses ${kinds.join(', ') || 'no qdisc'}` };
}

function serverPids(sockets: ListeningSocket[]): number[] {
  return [...new Set(sockets.flatMap((s) => s.processes.filter((p) => p.name === SERVER_PROCESS).map((p) => p.pid)))];
}

function checkListening(sockets: ListeningSocket[] | string, expected: Expectations): CheckResult[] {
  return expected.protocols.map((protocol) => {
    const name = `listening on ${expected.port}/${protocol}`;
    if (typeof sockets === 'string') return { name, ok: false, detail: sockets };
    const onPort = sockets.filter((s) => s.protocol === protocol && s.port === expected.port);
    if (onPort.length === 0) return { name, ok: false, detail: `nothing listens on ${protocol} port ${expected.port}` };
    const server = onPort.find((s) => s.processes.some((p) => p.name === SERVER_PROCESS));
    if (server) return { name, ok: true, detail: `${SERVER_PROCESS} on ${server.address}:${server.port}` };
    const owners = onPort.flatMap((s) => s.processes.map((p) => `${p.name} (pid ${p.pid})`));
    return {
      name,
      ok: false,
      detail: `port ${expected.port}/${protocol} is held by ${owners.join(', ') || 'an unknown process'}, not ${SERVER_PROCESS}`,
    };
  });
}

/** Whether the server runs, and its pid: the unit's main process under systemd, else the process owning the port. */
async function checkRunning(
  shell: HostShell,
  expected: Expectations,
  sockets: ListeningSocket[] | string,
): Promise<{ result: CheckResult; pid?: number }> {
  const name = 'ss-server running';
  const pid1 = await shell.tryRun('cat /proc/1/comm');
  const init = pid1.ok ? pid1.stdout.trim() : 'unknown';
  // systemd runs the unit only when it knows it: a host whose unit file systemd cannot see (the lab's proxy host, which
  // shares a machine's systemd but has its own /etc view) runs ss-server some other way, so the process decides there.
  const loadState = init === 'systemd' ? await shell.tryRun(`systemctl show -p LoadState --value ${expected.unit}`) : undefined;
  const unitKnown = loadState !== undefined && !(loadState.ok && loadState.stdout.trim() === 'not-found');
  if (unitKnown) {
    const state = await shell.tryRun(`systemctl is-active ${expected.unit} || true`);
    const active = state.ok ? state.stdout.trim() : state.error;
    if (active !== 'active') return { result: { name, ok: false, detail: `systemd unit ${expected.unit} is ${active || 'unknown'}` } };
    const main = await shell.tryRun(`systemctl show -p MainPID --value ${expected.unit}`);
    const pid = main.ok ? Number(main.stdout.trim()) : NaN;
    return {
      result: { name, ok: true, detail: `systemd unit ${expected.unit} active${pid > 0 ? `, main pid ${pid}` : ''}` },
      pid: pid > 0 ? pid : undefined,
    };
  }
  const pids = typeof sockets === 'string' ? [] : serverPids(sockets.filter((s) => s.port === expected.port));
  const how = init === 'systemd' ? `systemd does not know ${expected.unit}, process check` : `no systemd (PID 1 is ${init}), process check`;
  if (pids.length === 0) return { result: { name, ok: false, detail: `${how}: no ${SERVER_PROCESS} process owns port ${expected.port}` } };
  return {
    result: { name, ok: true, detail: `${how}: ${SERVER_PROCESS} pid ${pids.join(', ')} owns port ${expected.port}` },
    pid: pids[0],
  };
}

async function checkOpenFiles(shell: HostShell, expected: Expectations, pid: number | undefined): Promise<CheckResult> {
  const name = `ss-server max open files ${expected.maxOpenFiles}`;
  if (pid === undefined) return { name, ok: false, detail: `no ${SERVER_PROCESS} process to inspect` };
  const read = await shell.tryRun(`cat /proc/${pid}/limits`);
  if (!read.ok) return { name, ok: false, detail: read.error };
  const limit = parseLimit(read.stdout, 'Max open files');
  if (!limit) return { name, ok: false, detail: `no "Max open files" row in /proc/${pid}/limits` };
  const ok = limit.soft === expected.maxOpenFiles && limit.hard === expected.maxOpenFiles;
  return { name, ok, detail: `soft ${limit.soft}, hard ${limit.hard}` };
}

async function checkConfigMode(shell: HostShell, expected: Expectations): Promise<CheckResult> {
  const name = `config file mode 0${expected.configMode}`;
  const read = await shell.tryRun(`stat -c '%a %U %G' ${shellQuote(expected.configPath)}`);
  if (!read.ok) return { name, ok: false, detail: read.error };
  const stat = parseStat(read.stdout);
  if (!stat) return { name, ok: false, detail: `unexpected stat output ${JSON.stringify(read.stdout.trim())}` };
  const detail = `${expected.configPath} is 0${stat.mode} ${stat.owner}:${stat.group}`;
  return { name, ok: stat.mode === expected.configMode, detail };
}

async function checkEgressBind(shell: HostShell, expected: Expectations, pid: number | undefined): Promise<CheckResult> {
  const name = 'egress bind';
  if (pid === undefined) return { name, ok: false, detail: `no ${SERVER_PROCESS} process to inspect` };
  const cmdline = await shell.tryRun(`tr '\\0' '\\n' < /proc/${pid}/cmdline`);
  if (!cmdline.ok) return { name, ok: false, detail: cmdline.error };
  const address = bindAddress(parseCmdline(cmdline.stdout));
  if (address === undefined) {
    if (expected.egressMode === 'dedicated') {
      return { name, ok: false, detail: `the stack sets egress.mode dedicated, but ${SERVER_PROCESS} runs without -b` };
    }
    return { name, ok: true, detail: 'skipped, shared mode: no -b, outbound traffic leaves from the ingress address' };
  }
  if (expected.egressMode === 'shared') {
    return { name, ok: false, detail: `the stack sets egress.mode shared, but ${SERVER_PROCESS} binds -b ${address}` };
  }
  const addrs = await shell.tryRun('ip -o -4 addr show');
  if (!addrs.ok) return { name, ok: false, detail: addrs.error };
  const on = parseAddresses(addrs.stdout).find((a) => a.address === address);
  return on
    ? { name, ok: true, detail: `${SERVER_PROCESS} binds outbound connections to ${address} (on ${on.device})` }
    : { name, ok: false, detail: `${SERVER_PROCESS} binds -b ${address}, but no interface has that address` };
}

/** Every check, in a fixed order. Throws only when the host cannot run commands at all. */
export async function runChecks(remote: Remote, expected: Expectations): Promise<CheckResult[]> {
  const shell = await HostShell.open(remote);
  const results = await checkSysctls(shell, expected);
  const listing = await shell.tryRun('ss -H -lntup');
  const sockets = listing.ok ? parseListeners(listing.stdout) : listing.error;
  const running = await checkRunning(shell, expected, sockets);
  results.push(running.result);
  results.push(...checkListening(sockets, expected));
  results.push(await checkOpenFiles(shell, expected, running.pid));
  results.push(await checkConfigMode(shell, expected));
  results.push(await checkEgressBind(shell, expected, running.pid));
  return results;
}
