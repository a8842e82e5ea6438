/**
 * Local mode, end to end: the rendered server config, ACL, sysctls and unit on the lab's proxy host, the rendered
 * client config in a sandbox, real shadowsocks-libev in between.
 */
import { readFileSync } from 'node:fs';
import { parseServiceUnit } from '../../../src/lab';
import { labUp, type Lab } from '../../../src/lab';
import { run } from '../../../src/lab/run';
import { renderServerUnit, serverCommand, sysctlSettings } from '../../../src/render';
import { loadStackConfig } from '../../../src/config';
import { curlFrom, namespacesOf, recorder, requireBuilt, uniqueLabName, waitUntil, whoamiFrom } from '../../helpers/lab';

const SOCKS = '127.0.0.1:1080';
const name = uniqueLabName('loc');
let lab: Lab;
const progress = recorder();
const rootForwardingBefore = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8');

beforeAll(async () => {
  requireBuilt();
  lab = await labUp({ name, mode: 'local', onProgress: progress.onProgress });
});

afterAll(async () => {
  await lab?.down();
  expect(await namespacesOf(name)).toEqual([]);
});

test('lab up reports each step, ending with the egress check', () => {
  const steps = new Set(progress.events.map((e) => e.step));
  for (const step of ['topology', 'services', 'proxy', 'sandbox', 'check']) expect(steps).toContain(step);
  const checks = progress.events.filter((e) => e.step === 'check').map((e) => e.message);
  expect(checks.join('\n')).toContain(lab.egressEip);
});

test('through SOCKS5 127.0.0.1:1080 the internet sees the egress Elastic IP; directly it does not', async () => {
  const proxied = await whoamiFrom(lab, 'sb1', SOCKS);
  const direct = await whoamiFrom(lab, 'sb1');
  expect(proxied).toBe(lab.egressEip);
  expect(direct).toBe(lab.plan.sandboxHostPublic);
  expect(direct).not.toBe(proxied);
});

test('the proxy refuses private destinations and reaches public ones', async () => {
  const privateService = `http://${lab.plan.edgePrivate}/`;
  const metadata = `http://${lab.plan.metadata}/`;
  // Both services are up and reachable from the proxy host itself...
  expect((await curlFrom(lab, 'proxy', privateService)).stdout.trim()).toBe(lab.plan.proxyPrimary);
  expect((await curlFrom(lab, 'proxy', metadata)).stdout.trim()).toBe(lab.plan.proxyPrimary);
  // ...but not through the tunnel.
  const viaPrivate = await curlFrom(lab, 'sb1', privateService, SOCKS);
  const viaMetadata = await curlFrom(lab, 'sb1', metadata, SOCKS);
  expect(viaPrivate.code).not.toBe(0);
  expect(viaPrivate.stdout).toBe('');
  expect(viaMetadata.code).not.toBe(0);
  expect(viaMetadata.stdout).toBe('');
  expect((await curlFrom(lab, 'sb1', `http://${lab.plan.web}/json`, SOCKS)).stdout).toContain(`"address":"${lab.egressEip}"`);
});

test('ss-server listens on 8388/udp as well as tcp, and relays UDP', async () => {
  const udp = await lab.exec('proxy', ['ss', '-Hlun', 'sport = :8388']);
  const tcp = await lab.exec('proxy', ['ss', '-Hltn', 'sport = :8388']);
  expect(udp.stdout).toMatch(/:8388\b/);
  expect(tcp.stdout).toMatch(/:8388\b/);
  // A UDP round trip through the proxy: ss-tunnel forwards a local UDP port to the internet's UDP echo.
  const runDir = lab.snapshot.runDirs.sb1!;
  const script = [
    `ss-tunnel -c /etc/sandbox-kit/client-local.json -u -l 5300 -L ${lab.plan.web}:${lab.plan.webUdpPort} -f ${runDir}/ss-tunnel.pid`,
    'tries=0; until ss -Hlun "sport = :5300" | grep -q .; do tries=$((tries+1)); [ $tries -lt 50 ] || exit 3; sleep 0.1; done',
    'answer=$(echo ping | nc -u -w 2 127.0.0.1 5300)',
    `kill "$(cat ${runDir}/ss-tunnel.pid)"`,
    'echo "$answer"',
  ].join('\n');
  const relayed = await lab.exec('sb1', ['sh', '-c', script]);
  expect(relayed.code).toBe(0);
  expect(relayed.stdout.trim()).toBe(lab.egressEip);
});

test('the proxy host runs exactly the rendered unit: ExecStart, and the sysctls that are per namespace', async () => {
  const status = lab.serverStatus()!;
  expect(status.state).toBe('running');
  const cmdline = readFileSync(`/proc/${status.pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  expect(cmdline).toBe(serverCommand({ egressBindAddress: lab.plan.proxyEgress }));
  const unitSeen = await lab.exec('proxy', ['cat', '/etc/systemd/system/ss-server.service']);
  expect(unitSeen.stdout).toBe(renderServerUnit({ egressBindAddress: lab.plan.proxyEgress }));

  const settings = sysctlSettings(loadStackConfig({}).proxy);
  const applied = lab.snapshot.sysctls.applied;
  expect(Object.keys(applied)).toEqual(expect.arrayContaining(['net.ipv4.ip_forward', 'net.ipv4.tcp_fastopen']));
  for (const [key, value] of Object.entries(applied)) {
    expect(value).toBe(settings[key]);
    expect((await lab.exec('proxy', ['sysctl', '-n', key])).stdout.trim()).toBe(value);
  }
  expect(lab.snapshot.sysctls.notApplied['net.core.default_qdisc']).toMatch(/not per network namespace/);
  // The root namespace keeps its own settings.
  expect(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8')).toBe(rootForwardingBefore);
});

test('killing ss-server makes the supervisor restart it, with the unit file limit', async () => {
  const before = lab.serverStatus()!;
  process.kill(before.pid!, 'SIGKILL');
  const after = await waitUntil('ss-server restarted', () => {
    const s = lab.serverStatus();
    return s?.state === 'running' && s.pid !== undefined && s.pid !== before.pid ? s : undefined;
  });
  expect(after.starts).toBe(before.starts + 1);
  await waitUntil('ss-server listening again', async () =>
    (await lab.exec('proxy', ['ss', '-Hltn', 'sport = :8388'])).stdout.trim() ? true : undefined,
  );
  expect(await whoamiFrom(lab, 'sb1', SOCKS)).toBe(lab.egressEip);

  const unit = parseServiceUnit(renderServerUnit({ egressBindAddress: lab.plan.proxyEgress }));
  expect(unit.limitNoFile).toEqual({ soft: 51200, hard: 51200 });
  const limits = readFileSync(`/proc/${after.pid}/limits`, 'utf8');
  const openFiles = /^Max open files\s+(\d+)\s+(\d+)/m.exec(limits)!;
  // Raising a hard limit needs CAP_SYS_RESOURCE; where the machine withholds it, the supervisor says so and runs
  // with the highest limit allowed. Either way the process carries the limit the supervisor reports.
  const canRaise = (await run(['prlimit', '--nofile=51200:51200', '--', 'true'])).code === 0;
  const expected = canRaise ? unit.limitNoFile! : after.fileLimit!.applied;
  expect(after.fileLimit!.wanted).toEqual(unit.limitNoFile);
  expect({ soft: Number(openFiles[1]), hard: Number(openFiles[2]) }).toEqual(expected);
  if (!canRaise) expect(after.fileLimit!.note).toMatch(/CAP_SYS_RESOURCE/);
});

test('re-pointing the egress Elastic IP changes what the internet sees, and nothing in the sandbox', async () => {
  const clientConfig = async (): Promise<string> => (await lab.exec('sb1', ['cat', '/etc/sandbox-kit/client-local.json'])).stdout;
  const clientPid = async (): Promise<string> => (await lab.exec('sb1', ['cat', `${lab.snapshot.runDirs.sb1}/ss-local.pid`])).stdout.trim();
  const configBefore = await clientConfig();
  const pidBefore = await clientPid();
  const old = lab.egressEip;
  expect(await whoamiFrom(lab, 'sb1', SOCKS)).toBe(old);

  const moved = await lab.repointEgress();
  expect(moved.from).toBe(old);
  expect(moved.to).not.toBe(old);
  expect(lab.egressEip).toBe(moved.to);
  expect(await whoamiFrom(lab, 'sb1', SOCKS)).toBe(moved.to);
  expect(await clientConfig()).toBe(configBefore);
  expect(await clientPid()).toBe(pidBefore);
  await expect(lab.repointEgress(lab.ingressEip)).rejects.toThrow(/already used by the lab/);
  await expect(lab.repointEgress('192.0.2.1')).rejects.toThrow(/203\.0\.113/);
});
