import { loadStackConfig } from '../../../src/config';
import { HOST_PATHS, sysctlSettings } from '../../../src/render';
import { expectationsFor, formatResult, runChecks, type CommandResult, type Expectations, type Remote } from '../../../src/verify';
import * as captured from './helpers/captured';

/** A proxy host as the checks see it through SSH. */
interface FakeHost {
  uid: number;
  init: string;
  sysctl: string;
  route: string;
  tc: string;
  ss: string;
  unitState?: string;
  /** systemctl show -p LoadState (default loaded). */
  loadState?: string;
  mainPid?: number;
  limits: Record<number, string>;
  stat: string;
  cmdline: Record<number, string>;
  addrs: string;
  /** sudo refuses without a password. */
  sudoNeedsPassword?: boolean;
}

const ok = (stdout: string): CommandResult => ({ stdout, stderr: '', code: 0 });
const fail = (stderr: string, code = 1): CommandResult => ({ stdout: '', stderr, code });

/** The script inside `[sudo -n] sh -c '<PATH preamble> script'`. */
function innerScript(command: string): { script: string; sudo: boolean } {
  const m = /^(sudo -n )?sh -c '(.*)'$/s.exec(command);
  if (!m) throw new Error(`not a wrapped command: ${command}`);
  const script = m[2].replace(/'\\''/g, "'").replace(/^PATH=[^;]*; export PATH; /, '');
  return { script, sudo: m[1] !== undefined };
}

function fakeRemote(host: FakeHost): Remote & { commands: string[] } {
  const commands: string[] = [];
  return {
    commands,
    async exec(command) {
      commands.push(command);
      if (command === 'id -u') return ok(`${host.uid}\n`);
      const { script, sudo } = innerScript(command);
      if (sudo && host.sudoNeedsPassword) return fail('sudo: a password is required');
      let m: RegExpExecArray | null;
      if (script.startsWith('sysctl -e ')) return ok(host.sysctl);
      if (script === 'ip -4 route show default') return ok(host.route);
      if (script.startsWith('tc qdisc show dev ')) return ok(host.tc);
      if (script === 'ss -H -lntup') return ok(host.ss);
      if (script === 'cat /proc/1/comm') return ok(`${host.init}\n`);
      if (script.startsWith('systemctl show -p LoadState --value ')) return ok(`${host.loadState ?? 'loaded'}\n`);
      if (script.startsWith('systemctl is-active ')) return ok(`${host.unitState ?? 'inactive'}\n`);
      if (script.startsWith('systemctl show -p MainPID --value ')) return ok(`${host.mainPid ?? 0}\n`);
      if ((m = /^cat \/proc\/(\d+)\/limits$/.exec(script))) {
        const text = host.limits[Number(m[1])];
        return text ? ok(text) : fail(`cat: /proc/${m[1]}/limits: No such file or directory`);
      }
      if (script === `stat -c '%a %U %G' ${HOST_PATHS.serverConfig}`) return ok(host.stat);
      if ((m = /^tr '\\0' '\\n' < \/proc\/(\d+)\/cmdline$/.exec(script))) return ok(host.cmdline[Number(m[1])] ?? '');
      if (script === 'ip -o -4 addr show') return ok(host.addrs);
      throw new Error(`fake host: unexpected command ${JSON.stringify(script)}`);
    },
  };
}

/** A healthy AWS host: systemd, dedicated egress, everything applied. */
const AWS_HOST: FakeHost = {
  uid: 1000,
  init: 'systemd',
  sysctl: captured.SYSCTL_APPLIED,
  route: captured.ROUTE_DEFAULT,
  tc: captured.TC_MQ_FQ,
  ss: captured.SS_LISTENING,
  unitState: 'active',
  mainPid: 812,
  limits: { 812: captured.LIMITS_51200 },
  stat: '600 root root\n',
  cmdline: { 812: captured.CMDLINE_BIND },
  addrs: captured.IP_ADDRS,
};

/** The lab's proxy host: root login, no systemd, default_qdisc only on the device. */
const LAB_HOST: FakeHost = {
  ...AWS_HOST,
  uid: 0,
  init: 'node',
  unitState: undefined,
  mainPid: undefined,
  sysctl: captured.SYSCTL_NAMESPACE,
  route: 'default via 198.18.0.1 dev px0 \n',
  tc: 'qdisc fq 8001: root refcnt 2 limit 10000p flow_limit 100p buckets 1024\n',
  cmdline: { 812: captured.CMDLINE_BIND.replace('172.31.16.11', '198.18.0.2') },
  addrs: captured.IP_ADDRS_LAB,
};

const DEFAULTS = loadStackConfig({});
const ANY_EGRESS = expectationsFor(DEFAULTS, { egressModeKnown: false });
const DEDICATED = expectationsFor(DEFAULTS, { egressModeKnown: true });
const SHARED = expectationsFor(loadStackConfig({ egress: { mode: 'shared' } }), { egressModeKnown: true });

async function check(host: FakeHost, expected: Expectations = ANY_EGRESS) {
  const remote = fakeRemote(host);
  const results = await runChecks(remote, expected);
  const byName = (prefix: string) => {
    const found = results.filter((r) => r.name.startsWith(prefix));
    if (found.length !== 1) throw new Error(`expected one check named ${prefix}..., got ${results.map((r) => r.name).join(' | ')}`);
    return found[0];
  };
  return { results, byName, commands: remote.commands, failed: results.filter((r) => !r.ok).map((r) => r.name) };
}

describe('runChecks', () => {
  it('passes a healthy AWS host, every root command through sudo -n', async () => {
    const { results, failed, byName, commands } = await check(AWS_HOST, DEDICATED);
    expect(failed).toEqual([]);
    const sysctlChecks = results.filter((r) => r.name.startsWith('sysctl '));
    expect(sysctlChecks.map((r) => r.name)).toEqual(Object.entries(sysctlSettings(DEFAULTS.proxy)).map(([k, v]) => `sysctl ${k}=${v}`));
    expect(byName('ss-server running').detail).toMatch(/systemd unit ss-server\.service active, main pid 812/);
    expect(byName('listening on 8388/tcp').ok).toBe(true);
    expect(byName('listening on 8388/udp').ok).toBe(true);
    expect(byName('ss-server max open files 51200').detail).toBe('soft 51200, hard 51200');
    expect(byName('config file mode 0600').detail).toBe(`${HOST_PATHS.serverConfig} is 0600 root:root`);
    expect(byName('egress bind').detail).toMatch(/172\.31\.16\.11 \(on ens5\)/);
    expect(commands.filter((c) => c !== 'id -u').every((c) => c.startsWith('sudo -n sh -c '))).toBe(true);
  });

  it('passes the lab host: root without sudo, no systemd, fq on the device instead of the global sysctl', async () => {
    const { failed, byName, commands } = await check(LAB_HOST, DEDICATED);
    expect(failed).toEqual([]);
    expect(byName('sysctl net.core.default_qdisc=fq').detail).toBe(
      'reads nothing (not a setting of this network namespace), but the default-route device px0 uses fq',
    );
    expect(byName('ss-server running').detail).toBe('no systemd (PID 1 is node), process check: ss-server pid 812 owns port 8388');
    expect(byName('egress bind').detail).toMatch(/198\.18\.0\.2 \(on px0\)/);
    expect(commands.some((c) => c.startsWith('sudo'))).toBe(false);
  });

  it('fails a qdisc that is fq neither globally nor on the default-route device', async () => {
    const { failed, byName } = await check({ ...LAB_HOST, sysctl: captured.SYSCTL_GLOBAL_PFIFO, tc: captured.TC_PFIFO });
    expect(failed).toEqual(['sysctl net.core.default_qdisc=fq']);
    expect(byName('sysctl net.core.default_qdisc=fq').detail).toBe('reads pfifo_fast, and the default-route device px0 uses pfifo_fast');
    const inNamespace = await check({ ...LAB_HOST, tc: captured.TC_PFIFO });
    expect(inNamespace.failed).toEqual(['sysctl net.core.default_qdisc=fq']);
  });

  it('passes a host whose global default_qdisc is not fq when its default-route device uses fq', async () => {
    const { failed, byName } = await check({ ...LAB_HOST, sysctl: captured.SYSCTL_GLOBAL_PFIFO });
    expect(failed).toEqual([]);
    expect(byName('sysctl net.core.default_qdisc=fq').detail).toBe('reads pfifo_fast, but the default-route device px0 uses fq');
  });

  it('fails sysctls that were not applied, saying what they read', async () => {
    const { failed, byName } = await check({
      ...AWS_HOST,
      sysctl: captured.SYSCTL_APPLIED.replace('ip_forward = 1', 'ip_forward = 0').replace('bbr', 'cubic'),
    });
    expect(failed).toEqual(['sysctl net.ipv4.ip_forward=1', 'sysctl net.ipv4.tcp_congestion_control=bbr']);
    expect(byName('sysctl net.ipv4.tcp_congestion_control=bbr').detail).toBe('reads cubic');
  });

  it('checks the process when systemd is PID 1 but does not know the unit (the lab on a systemd machine)', async () => {
    const { failed, byName } = await check({ ...LAB_HOST, init: 'systemd', loadState: 'not-found' });
    expect(failed).toEqual([]);
    expect(byName('ss-server running').detail).toBe(
      'systemd does not know ss-server.service, process check: ss-server pid 812 owns port 8388',
    );
    const stopped = await check({ ...LAB_HOST, init: 'systemd', loadState: 'not-found', ss: '' });
    expect(stopped.byName('ss-server running')).toMatchObject({
      ok: false,
      detail: 'systemd does not know ss-server.service, process check: no ss-server process owns port 8388',
    });
  });

  it('fails an inactive unit and everything that needs the process', async () => {
    const { failed, byName } = await check({ ...AWS_HOST, unitState: 'failed', ss: '' });
    expect(failed).toEqual([
      'ss-server running',
      'listening on 8388/tcp',
      'listening on 8388/udp',
      'ss-server max open files 51200',
      'egress bind',
    ]);
    expect(byName('ss-server running').detail).toBe('systemd unit ss-server.service is failed');
    expect(byName('listening on 8388/udp').detail).toBe('nothing listens on udp port 8388');
  });

  it('fails a missing UDP listener and a port held by another program', async () => {
    expect((await check({ ...AWS_HOST, ss: captured.SS_UDP_MISSING })).failed).toEqual(['listening on 8388/udp']);
    const taken = await check({ ...AWS_HOST, ss: captured.SS_PORT_TAKEN });
    expect(taken.failed).toEqual(['listening on 8388/tcp']);
    expect(taken.byName('listening on 8388/tcp').detail).toBe('port 8388/tcp is held by nginx (pid 900), nginx (pid 901), not ss-server');
  });

  it('checks only TCP for a tcp_only server, on the configured port', async () => {
    const expected = expectationsFor(loadStackConfig({ proxy: { mode: 'tcp_only', port: 443 } }), { egressModeKnown: false });
    const { results, failed } = await check({ ...AWS_HOST, ss: captured.SS_LISTENING.replace(/:8388/g, ':443') }, expected);
    expect(results.filter((r) => r.name.startsWith('listening')).map((r) => r.name)).toEqual(['listening on 443/tcp']);
    expect(failed).toEqual([]);
  });

  it('fails the default open-files limit and a readable config file', async () => {
    const { failed, byName } = await check({ ...AWS_HOST, limits: { 812: captured.LIMITS_DEFAULT }, stat: '644 root root\n' });
    expect(failed).toEqual(['ss-server max open files 51200', 'config file mode 0600']);
    expect(byName('ss-server max open files').detail).toBe('soft 1024, hard 524288');
    expect(byName('config file mode').detail).toBe(`${HOST_PATHS.serverConfig} is 0644 root:root`);
  });

  it('fails when the config file is missing', async () => {
    const remote = fakeRemote(AWS_HOST);
    const exec = remote.exec.bind(remote);
    remote.exec = async (command) =>
      command.includes('stat -c') ? fail(`stat: cannot statx '${HOST_PATHS.serverConfig}': No such file or directory`) : exec(command);
    const results = await runChecks(remote, ANY_EGRESS);
    const mode = results.find((r) => r.name === 'config file mode 0600');
    expect(mode?.ok).toBe(false);
    expect(mode?.detail).toMatch(/No such file or directory/);
  });

  describe('egress bind', () => {
    it('notes shared mode when the server has no -b and no stack says otherwise', async () => {
      const host = { ...AWS_HOST, cmdline: { 812: captured.CMDLINE_SHARED } };
      const any = await check(host, ANY_EGRESS);
      expect(any.byName('egress bind')).toEqual({
        name: 'egress bind',
        ok: true,
        detail: expect.stringMatching(/^skipped, shared mode: no -b/),
      });
      expect((await check(host, SHARED)).failed).toEqual([]);
    });

    it('fails a missing -b when the stack wants a dedicated egress address', async () => {
      const { failed, byName } = await check({ ...AWS_HOST, cmdline: { 812: captured.CMDLINE_SHARED } }, DEDICATED);
      expect(failed).toEqual(['egress bind']);
      expect(byName('egress bind').detail).toMatch(/egress.mode dedicated, but ss-server runs without -b/);
    });

    it('fails a -b when the stack is in shared mode', async () => {
      expect((await check(AWS_HOST, SHARED)).byName('egress bind').detail).toMatch(
        /egress.mode shared, but ss-server binds -b 172.31.16.11/,
      );
    });

    it('fails a bind address that is on no interface', async () => {
      const { failed, byName } = await check({
        ...AWS_HOST,
        addrs: captured.IP_ADDRS.split('\n')
          .filter((l) => !l.includes('172.31.16.11'))
          .join('\n'),
      });
      expect(failed).toEqual(['egress bind']);
      expect(byName('egress bind').detail).toBe('ss-server binds -b 172.31.16.11, but no interface has that address');
    });
  });

  it('fails every check, naming sudo, when sudo wants a password', async () => {
    const { results } = await check({ ...AWS_HOST, sudoNeedsPassword: true });
    expect(results.every((r) => !r.ok)).toBe(true);
    expect(results.find((r) => r.name === 'config file mode 0600')?.detail).toMatch(/through sudo -n\): sudo: a password is required/);
  });

  it('stops when the host cannot run a command at all', async () => {
    const remote: Remote = { exec: async () => fail('This account is currently not available.') };
    await expect(runChecks(remote, ANY_EGRESS)).rejects.toThrow(/cannot run commands on the host: This account is currently not available/);
  });
});

describe('formatResult', () => {
  it('prints PASS name or FAIL name: detail', () => {
    expect(formatResult({ name: 'listening on 8388/tcp', ok: true })).toBe('PASS listening on 8388/tcp');
    expect(formatResult({ name: 'egress bind', ok: false, detail: 'no -b' })).toBe('FAIL egress bind: no -b');
  });
});
