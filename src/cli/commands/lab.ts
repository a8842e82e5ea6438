/** `sandbox-kit lab`: the network-namespace lab (up, status, exec, repoint-egress, down). Thin: parses flags, calls src/lab. */
import { ipv4 } from '../../config';
import { parseFlags, switchFlag, UsageError, valueFlag } from '../args';
import { labModeFlag, labNameFlag, sandboxCountFlag } from '../lab-flags';
import { attachLab, DEFAULT_LAB_NAME, downLab, labUp, type Lab, type LabProgress, type LabStatus } from '../../lab';

const USAGE = `usage: sandbox-kit lab <subcommand> [options]

  up [--mode local|transparent] [--sandboxes N] [--host-link] [--json]
                         build the lab and leave it running (removes leftovers of an earlier run first)
  status [--json]        namespaces, processes, ss-server, Elastic IPs
  exec SANDBOX -- CMD... run a command in a lab node (sb1, sb2, ..., proxy, inet, web, sbhost)
  repoint-egress [--to 203.0.113.X] [--json]
                         move the egress Elastic IP (default: the next free address)
  down                   stop everything and remove every namespace, link and file of the lab

every subcommand takes --name NAME (default ${DEFAULT_LAB_NAME}); the lab needs root`;

function usage(): number {
  console.log(USAGE);
  return 0;
}

function printProgress(stream: NodeJS.WriteStream): (e: LabProgress) => void {
  return (e) => stream.write(`[${e.step}] ${e.message}\n`);
}

function summary(lab: Lab, status: LabStatus): Record<string, unknown> {
  return {
    name: lab.name,
    mode: lab.mode,
    namespaces: Object.fromEntries(status.namespaces.map((n) => [n.node, n.name])),
    proxy: {
      address: status.proxyAddress,
      ingressEip: status.ingressEip,
      egressEip: status.egressEip,
      serverPid: status.server?.pid,
      sshKey: lab.sshClientKey,
    },
    sandboxes: status.sandboxes,
    sysctls: status.sysctls,
    ...(status.hostLink ? { hostLink: status.hostLink } : {}),
    healthy: status.healthy,
  };
}

function printStatus(s: LabStatus): void {
  console.log(`lab ${s.name} (${s.mode} mode, up since ${s.createdAt}): ${s.healthy ? 'healthy' : 'NOT healthy'}`);
  for (const n of s.namespaces) console.log(`  namespace ${n.name.padEnd(20)} ${n.present ? 'present' : 'MISSING'}`);
  for (const p of s.processes)
    console.log(`  ${p.role.padEnd(16)} pid ${String(p.pid).padEnd(8)} in ${p.node.padEnd(7)} ${p.alive ? 'running' : 'DEAD'}`);
  if (s.server)
    console.log(`  ss-server        ${s.server.state}${s.server.pid ? `, pid ${s.server.pid}` : ''}, started ${s.server.starts} time(s)`);
  console.log(`  proxy ${s.proxyAddress}, ingress Elastic IP ${s.ingressEip}, egress Elastic IP ${s.egressEip}`);
  for (const sb of s.sandboxes) console.log(`  sandbox ${sb.node} ${sb.address}`);
  for (const [k, why] of Object.entries(s.sysctls.notApplied)) console.log(`  sysctl ${k}: ${why}`);
  if (s.hostLink) console.log(`  host link ${s.hostLink.device}: ${s.hostLink.route} via ${s.hostLink.via}`);
}

async function up(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('lab up', argv, {
    name: labNameFlag(),
    mode: labModeFlag(),
    sandboxes: sandboxCountFlag(1),
    'host-link': switchFlag(),
    json: switchFlag(),
  });
  if (help) return usage();
  const lab = await labUp({
    name: values.name,
    mode: values.mode ?? 'local',
    sandboxes: values.sandboxes,
    hostLink: values['host-link'],
    onProgress: printProgress(values.json ? process.stderr : process.stdout),
  });
  const status = await lab.status();
  const check = await lab.egressCheck();
  if (values.json) {
    console.log(JSON.stringify({ ...summary(lab, status), egressCheck: check }, null, 2));
  } else {
    console.log(
      `lab ${lab.name} is up (${lab.mode} mode). Try: sandbox-kit lab exec ${lab.sandboxes[0]} -- curl -s ${lab.mode === 'local' ? `--socks5-hostname 127.0.0.1:${lab.socksPort} ` : ''}http://${lab.plan.web}/`,
    );
    console.log(`remove it with: sandbox-kit lab down${lab.name === DEFAULT_LAB_NAME ? '' : ` --name ${lab.name}`}`);
  }
  return 0;
}

async function status(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('lab status', argv, { name: labNameFlag(), json: switchFlag() });
  if (help) return usage();
  const lab = attachLab(values.name);
  const s = await lab.status();
  if (values.json) console.log(JSON.stringify({ ...summary(lab, s), processes: s.processes, server: s.server }, null, 2));
  else printStatus(s);
  return s.healthy ? 0 : 1;
}

async function exec(argv: string[]): Promise<number> {
  const sep = argv.indexOf('--');
  if (argv.includes('--help') || argv.includes('-h')) return usage();
  if (sep < 0 || sep === argv.length - 1) {
    throw new UsageError('lab exec', [{ key: 'arguments', given: JSON.stringify(argv), expected: 'NODE -- COMMAND [ARGS...]' }]);
  }
  const { values, positionals } = parseFlags(
    'lab exec',
    argv.slice(0, sep),
    { name: labNameFlag() },
    { min: 1, max: 1, what: 'one node before --' },
  );
  const lab = attachLab(values.name);
  const child = lab.spawnIn(positionals[0]!, argv.slice(sep + 1), { stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('error', (err) => {
      console.error(`lab exec: ${err.message}`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

async function repoint(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('lab repoint-egress', argv, {
    name: labNameFlag(),
    to: valueFlag(ipv4().optional()),
    json: switchFlag(),
  });
  if (help) return usage();
  const lab = attachLab(values.name);
  const moved = await lab.repointEgress(values.to);
  if (values.json) console.log(JSON.stringify(moved));
  else console.log(`egress Elastic IP moved from ${moved.from} to ${moved.to}`);
  return 0;
}

async function down(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('lab down', argv, { name: labNameFlag() });
  if (help) return usage();
  await downLab(values.name, printProgress(process.stdout));
  return 0;
}

const SUBCOMMANDS: Record<string, (argv: string[]) => Promise<number>> = { up, status, exec, 'repoint-egress': repoint, down };

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  const handler = SUBCOMMANDS[sub];
  if (!handler) {
    console.error(`sandbox-kit lab: unknown subcommand ${JSON.stringify(sub)}\n\n${USAGE}`);
    return 2;
  }
  return handler(rest);
}
