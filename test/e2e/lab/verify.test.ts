/**
 * `sandbox-kit verify` against the lab's proxy host: run from another lab namespace over SSH, it passes, and it
 * fails naming the check once a sysctl is reverted on the host.
 */
import { labUp, type Lab } from '../../../src/lab';
import { namespacesOf, requireBuilt, uniqueLabName } from '../../helpers/lab';
import { CLI } from '../../helpers/cli';

const name = uniqueLabName('vfy');
let lab: Lab;

beforeAll(async () => {
  requireBuilt();
  lab = await labUp({ name });
});

afterAll(async () => {
  await lab?.down();
  expect(await namespacesOf(name)).toEqual([]);
});

interface Verdict {
  code: number;
  checks: Record<string, boolean>;
  output: string;
}

/** Runs the built CLI's verify from the edge namespace (an admin's machine on the proxy's network). */
async function verify(): Promise<Verdict> {
  const result = await lab.exec(
    'inet',
    [process.execPath, CLI, 'verify', '--host', lab.plan.proxyPrimary, '--ssh-key', lab.sshClientKey, '--user', 'root'],
    { timeoutMs: 60_000 },
  );
  const checks: Record<string, boolean> = {};
  for (const line of result.stdout.split('\n')) {
    const m = /^(PASS|FAIL) ([^:]+)/.exec(line);
    if (m) checks[m[2]!.trim()] = m[1] === 'PASS';
  }
  return { code: result.code, checks, output: `${result.stdout}${result.stderr}` };
}

/**
 * Checks this machine cannot pass whatever the lab does, each with the lab's own record of why: a kernel without
 * the fq qdisc, or root without CAP_SYS_RESOURCE (so no 51200 open-file limit). Everywhere else the set is empty.
 */
function machineLimits(): string[] {
  const limits: string[] = [];
  const qdisc = lab.snapshot.sysctls.notApplied['net.core.default_qdisc'] ?? '';
  if (/failed too/.test(qdisc)) limits.push('sysctl net.core.default_qdisc=fq');
  if (lab.serverStatus()?.fileLimit?.note) limits.push('ss-server max open files 51200');
  return limits;
}

test('verify passes against the lab proxy host, and fails naming the check when a sysctl is reverted', async () => {
  const before = await verify();
  expect(Object.keys(before.checks).length).toBeGreaterThan(5);
  const failed = Object.entries(before.checks)
    .filter(([, ok]) => !ok)
    .map(([check]) => check);
  expect(failed.sort()).toEqual(machineLimits().sort());
  expect(before.code).toBe(failed.length === 0 ? 0 : 1);
  expect(before.checks['sysctl net.ipv4.ip_forward=1']).toBe(true);

  const revert = await lab.exec('proxy', ['sysctl', '-w', 'net.ipv4.ip_forward=0']);
  expect(revert.code).toBe(0);
  try {
    const after = await verify();
    expect(after.code).toBe(1);
    expect(after.checks['sysctl net.ipv4.ip_forward=1']).toBe(false);
    expect(after.output).toMatch(/FAIL sysctl net\.ipv4\.ip_forward=1/);
  } finally {
    await lab.exec('proxy', ['sysctl', '-w', 'net.ipv4.ip_forward=1']);
  }
});
