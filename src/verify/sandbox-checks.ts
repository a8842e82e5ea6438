import type { ClientMode, StackConfig } from '../config';
import { SANDBOX_HOST_PATHS as P, SANDBOX_UNITS, sandboxUnits, type SandboxRole } from '../render';
import { HostShell, type CheckResult } from './checks';
import { parseStat } from './parse';
import type { Remote } from './remote';
import { shellQuote } from '../util/shell-quote';
import { bypassCommand, renderSandboxProbe, type SandboxProbeOptions } from './sandbox-probe';
import { findCommand, judgeBypass, parseProbeReport, parseProcesses, parseTemplates } from './sandbox-parse';

/** What a healthy single sandbox host looks like, from the stack config and the stack outputs. */
export interface SandboxExpectations {
  /** A single host runs the gateway too; a fleet host runs the platform only (its sandboxes are reached through the fleet's gateways). */
  role: Extract<SandboxRole, 'single' | 'fleet-host'>;
  apiPort: number;
  /** Where the probe reaches its sandbox: this host's gateway, or the fleet's (the stack output sandboxUrl). */
  gatewayUrl: string;
  agentPort: number;
  brand: string;
  template: string;
  mode: ClientMode;
  socksPort: number;
  /** The proxy's egress address (stack output egressIp): what the internet must see from a sandbox. */
  egressIp?: string;
  /** A what-is-my-IP URL over plain HTTP. */
  checkUrl: string;
  /** Node inside every sandbox (the runtime's payload). */
  sandboxNode: string;
  /** Paths, overridable for a lab whose files are not at the host paths. */
  paths: { lib: string; bundleSums: string; apiKey: string; cli: string };
}

export const DEFAULT_CHECK_URL = 'http://checkip.amazonaws.com/';
export const SANDBOX_NODE = '/opt/sandbox-kit/node';

/** A fleet host has no gateway of its own: the probe needs the fleet's (`gatewayUrl`). */
export function sandboxExpectationsFor(
  config: StackConfig,
  extra: { egressIp?: string; checkUrl?: string; gatewayUrl?: string },
): SandboxExpectations {
  const role = config.fleet.hosts > 1 ? 'fleet-host' : 'single';
  if (role === 'fleet-host' && extra.gatewayUrl === undefined)
    throw new Error("a fleet host runs no gateway of its own: give the fleet's (the stack output sandboxUrl)");
  return {
    role,
    apiPort: config.sandboxHost.apiPort,
    gatewayUrl: extra.gatewayUrl ?? `http://127.0.0.1:${config.gateway.port}`,
    agentPort: config.agent.port,
    brand: config.brand,
    template: config.template.alias,
    mode: config.template.mode,
    socksPort: config.client.localPort,
    ...(extra.egressIp ? { egressIp: extra.egressIp } : {}),
    checkUrl: extra.checkUrl ?? DEFAULT_CHECK_URL,
    sandboxNode: SANDBOX_NODE,
    paths: { lib: P.lib, bundleSums: P.bundleSums, apiKey: P.apiKey, cli: P.cli },
  };
}

const SERVICES: Array<{ unit: string; command?: string; process?: string }> = [
  { unit: SANDBOX_UNITS.redis, process: 'redis-server' },
  { unit: SANDBOX_UNITS.platform, command: 'platform' },
  { unit: SANDBOX_UNITS.gateway, command: 'gateway' },
];

/** Each service active: the systemd unit where systemd runs it, else its process (the lab's supervisor). */
async function checkServices(shell: HostShell, expected: SandboxExpectations): Promise<CheckResult[]> {
  const pid1 = await shell.tryRun('cat /proc/1/comm');
  const init = pid1.ok ? pid1.stdout.trim() : 'unknown';
  const ps = await shell.tryRun('ps -eo pid=,args=');
  const rows = ps.ok ? parseProcesses(ps.stdout) : [];
  const results: CheckResult[] = [];
  for (const service of SERVICES.filter((s) => sandboxUnits(expected.role).includes(s.unit))) {
    const name = `${service.unit} active`;
    if (init === 'systemd') {
      const load = await shell.tryRun(`systemctl show -p LoadState --value ${service.unit}`);
      if (!(load.ok && load.stdout.trim() === 'not-found')) {
        const state = await shell.tryRun(`systemctl is-active ${service.unit} || true`);
        const active = state.ok ? state.stdout.trim() : state.error;
        results.push({ name, ok: active === 'active', detail: `systemd unit ${active || 'unknown'}` });
        continue;
      }
    }
    const row = service.command
      ? findCommand(rows, expected.paths.cli, service.command)
      : rows.find((r) => r.args.includes(service.process!));
    const how = init === 'systemd' ? 'systemd does not know the unit, process check' : `no systemd (PID 1 is ${init}), process check`;
    results.push(
      row
        ? { name, ok: true, detail: `${how}: pid ${row.pid}` }
        : {
            name,
            ok: false,
            detail: `${how}: no ${service.command ? `${expected.paths.cli} ${service.command}` : service.process} process`,
          },
    );
  }
  return results;
}

async function checkBundle(shell: HostShell, expected: SandboxExpectations): Promise<CheckResult> {
  const name = 'release bundle intact';
  const run = await shell.tryRun(
    `cd ${shellQuote(expected.paths.lib)} && sha256sum --check --strict --quiet ${shellQuote(expected.paths.bundleSums)} && echo ok`,
  );
  if (!run.ok) return { name, ok: false, detail: run.error };
  return run.stdout.trim().endsWith('ok')
    ? { name, ok: true, detail: `every file of ${expected.paths.bundleSums} matches` }
    : { name, ok: false, detail: run.stdout.trim() };
}

async function checkKeyMode(shell: HostShell, expected: SandboxExpectations): Promise<CheckResult> {
  const name = 'API key file mode 0600';
  const read = await shell.tryRun(`stat -c '%a %U %G' ${shellQuote(expected.paths.apiKey)}`);
  if (!read.ok) return { name, ok: false, detail: read.error };
  const stat = parseStat(read.stdout);
  if (!stat) return { name, ok: false, detail: `unexpected stat output ${JSON.stringify(read.stdout.trim())}` };
  return { name, ok: stat.mode === '600', detail: `${expected.paths.apiKey} is 0${stat.mode} ${stat.owner}:${stat.group}` };
}

async function checkRuntime(shell: HostShell): Promise<CheckResult> {
  const name = 'OCI runtime';
  const run = await shell.tryRun('{ crun --version || runc --version; } 2>/dev/null | head -1; stat -fc %T /sys/fs/cgroup');
  if (!run.ok) return { name, ok: false, detail: run.error };
  const [version, fs] = run.stdout.trim().split('\n');
  if (!version || !/(crun|runc) version/.test(version)) return { name, ok: false, detail: 'neither crun nor runc answers --version' };
  return {
    name,
    ok: true,
    detail: `${version.trim()}; /sys/fs/cgroup is ${fs === 'cgroup2fs' ? 'cgroup v2' : `${fs ?? 'unknown'} (hybrid or v1)`}`,
  };
}

function apiCurl(expected: SandboxExpectations, path: string): string {
  // The key is read on the host into curl's header: it never appears in the command sent over SSH.
  return `curl -sS --max-time 10 -H "X-API-Key: $(head -n 1 ${shellQuote(expected.paths.apiKey)})" http://127.0.0.1:${expected.apiPort}${path}`;
}

async function checkTemplate(shell: HostShell, expected: SandboxExpectations): Promise<CheckResult> {
  const name = `template ${expected.template} present`;
  const run = await shell.tryRun(apiCurl(expected, '/templates'));
  if (!run.ok) return { name, ok: false, detail: `the platform API does not answer: ${run.error}` };
  const templates = parseTemplates(run.stdout);
  if (typeof templates === 'string') return { name, ok: false, detail: `GET /templates: ${templates}` };
  const found = templates.find((t) => t.aliases.includes(expected.template) || t.templateID === expected.template);
  if (!found)
    return {
      name,
      ok: false,
      detail: `the API lists ${templates.length} templates, none named ${expected.template} (build it: docs/deploy-aws.md)`,
    };
  return { name, ok: true, detail: `templateID ${found.templateID}${found.status ? `, ${found.status}` : ''}` };
}

function probeOptions(expected: SandboxExpectations): SandboxProbeOptions {
  return {
    apiPort: expected.apiPort,
    gatewayUrl: expected.gatewayUrl,
    agentPort: expected.agentPort,
    brand: expected.brand,
    apiKeyFile: expected.paths.apiKey,
    template: expected.template,
    checkUrl: expected.checkUrl,
    mode: expected.mode,
    socksPort: expected.socksPort,
    sandboxNode: expected.sandboxNode,
  };
}

async function checkSandboxEgress(shell: HostShell, expected: SandboxExpectations): Promise<CheckResult> {
  const name = `a sandbox reaches the internet through the proxy${expected.egressIp ? ` (${expected.egressIp})` : ''}`;
  const probe = renderSandboxProbe(probeOptions(expected));
  const run = await shell.tryRun(`node -e ${shellQuote(probe)}`);
  if (!run.ok) return { name, ok: false, detail: run.error };
  const outcome = parseProbeReport(run.stdout);
  const removed = outcome.created ? (outcome.removed ? '; sandbox removed' : `; sandbox ${outcome.sandboxID} NOT removed`) : '';
  if (outcome.problem) return { name, ok: false, detail: `${outcome.problem}${removed}` };
  const seen = outcome.stdout.trim();
  if (outcome.exitCode !== 0)
    return {
      name,
      ok: false,
      detail: `the request in sandbox ${outcome.sandboxID} exited ${outcome.exitCode}: ${outcome.stderr.trim() || seen}${removed}`,
    };
  if (expected.egressIp === undefined)
    return { name, ok: true, detail: `sandbox ${outcome.sandboxID} is seen as ${seen} (no --egress-ip to compare with)${removed}` };
  return { name, ok: seen === expected.egressIp, detail: `sandbox ${outcome.sandboxID} is seen as ${seen}${removed}` };
}

/**
 * The attack on the stack's egress: root in a sandbox of the proxy template flushes its NAT table and requests
 * `checkUrl` directly, with no proxy. It must get no way out, or leave from the egress address; never from the host's
 * own (what the host itself is seen as, asked from the host).
 */
async function checkSandboxBypass(shell: HostShell, expected: SandboxExpectations): Promise<CheckResult> {
  const name = "root in a sandbox, its NAT table flushed, cannot leave past the proxy from the host's address";
  const own = await shell.tryRun(`curl -sS --max-time 10 --noproxy '*' ${shellQuote(expected.checkUrl)}`);
  const hostSeen = own.ok && own.stdout.trim() !== '' ? own.stdout.trim() : undefined;
  const probe = renderSandboxProbe({ ...probeOptions(expected), command: bypassCommand(expected.checkUrl, expected.sandboxNode) });
  const run = await shell.tryRun(`node -e ${shellQuote(probe)}`);
  if (!run.ok) return { name, ok: false, detail: run.error };
  const known = {
    ...(expected.egressIp !== undefined ? { egressIp: expected.egressIp } : {}),
    ...(hostSeen !== undefined ? { hostSeen } : {}),
  };
  return { name, ...judgeBypass(parseProbeReport(run.stdout), known) };
}

/** Every sandbox host check, in a fixed order. Throws only when the host cannot run commands at all. */
export async function runSandboxHostChecks(remote: Remote, expected: SandboxExpectations): Promise<CheckResult[]> {
  const shell = await HostShell.open(remote);
  const results = await checkServices(shell, expected);
  results.push(await checkBundle(shell, expected));
  results.push(await checkKeyMode(shell, expected));
  results.push(await checkRuntime(shell));
  results.push(await checkTemplate(shell, expected));
  results.push(await checkSandboxEgress(shell, expected));
  results.push(await checkSandboxBypass(shell, expected));
  return results;
}
