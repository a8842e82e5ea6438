import { loadStackConfig } from '../../../src/config';
import { SANDBOX_HOST_PATHS as P } from '../../../src/render';
import { formatResult, runSandboxHostChecks, sandboxExpectationsFor, type CommandResult, type Remote } from '../../../src/verify';

/** Output captured from a Debian 12 sandbox host (systemd, crun 1.8, cgroup v2), trimmed to what matters. */
const PS_LAB = `    1 /sbin/init
  801 /usr/bin/redis-server 127.0.0.1:6379
  812 /usr/bin/node ${P.cli} platform --port 3001 --host 0.0.0.0 --catalog redis://127.0.0.1:6379/0
  840 /usr/bin/node ${P.cli} gateway --port 3000 --host 0.0.0.0
`;
const TEMPLATES = JSON.stringify([{ templateID: 'tpl8k2m4q', aliases: ['sandbox-kit-proxy'], buildStatus: 'ready' }]);
const frame = (m: unknown, flags = 0) => ({ flags, message: m });
const b64 = (t: string) => Buffer.from(t).toString('base64');
const PROBE_OK = JSON.stringify({
  create: { status: 201, sandboxID: 'sbxa1b2c3' },
  frames: [
    frame({ event: { start: { pid: 7 } } }),
    frame({ event: { data: { stdout: b64('198.51.100.44\n') } } }),
    frame({ event: { end: { exitCode: 0 } } }),
    frame({}, 2),
  ],
  kill: 204,
  error: null,
});

/** The bypass probe: root flushed the NAT table, its direct request found no way out. */
const bypassReport = (exitCode: number, stdout: string, stderr: string) =>
  JSON.stringify({
    create: { status: 201, sandboxID: 'sbxd4e5f6' },
    frames: [
      frame({ event: { start: { pid: 9 } } }),
      ...(stdout ? [frame({ event: { data: { stdout: b64(stdout) } } })] : []),
      ...(stderr ? [frame({ event: { data: { stderr: b64(stderr) } } })] : []),
      frame({ event: { end: { exitCode } } }),
      frame({}, 2),
    ],
    kill: 204,
    error: null,
  });
const BYPASS_REFUSED = bypassReport(1, '', 'iptables: nat table flushed\nconnect ECONNREFUSED 198.51.100.7:80\n');
const HOST_SEEN = '192.0.2.10';

type Answers = Array<[RegExp, CommandResult]>;
const ok = (stdout: string): CommandResult => ({ stdout, stderr: '', code: 0 });

function fakeHost(answers: Answers): Remote & { commands: string[] } {
  const commands: string[] = [];
  return {
    commands,
    async exec(command) {
      commands.push(command);
      for (const [pattern, result] of answers) if (pattern.test(command)) return result;
      return { stdout: '', stderr: `unexpected command: ${command}`, code: 127 };
    },
  };
}

const healthy = (init: string, probe = PROBE_OK, bypass = BYPASS_REFUSED): Answers => [
  [/^id -u$/, ok('0\n')],
  [/cat \/proc\/1\/comm/, ok(`${init}\n`)],
  [/LoadState/, ok('loaded\n')],
  [/systemctl is-active/, ok('active\n')],
  [/ps -eo/, ok(PS_LAB)],
  [/sha256sum --check/, ok('ok\n')],
  [/stat -c/, ok('600 root root\n')],
  [/crun --version/, ok('crun version 1.8.1\ncgroup2fs\n')],
  [/\/templates/, ok(TEMPLATES)],
  [/--noproxy/, ok(`${HOST_SEEN}\n`)],
  [/nat -F/, ok(`${bypass}\n`)],
  [/node -e/, ok(`${probe}\n`)],
];

const config = loadStackConfig({});

describe('sandbox host checks', () => {
  it('pass on a healthy host: services, bundle, key mode, runtime, template, egress through the proxy', async () => {
    const results = await runSandboxHostChecks(fakeHost(healthy('systemd')), sandboxExpectationsFor(config, { egressIp: '198.51.100.44' }));
    expect(results.map(formatResult)).toEqual([
      'PASS redis-server.service active: systemd unit active',
      'PASS sandbox-kit-platform.service active: systemd unit active',
      'PASS sandbox-kit-gateway.service active: systemd unit active',
      `PASS release bundle intact: every file of ${P.bundleSums} matches`,
      `PASS API key file mode 0600: ${P.apiKey} is 0600 root:root`,
      'PASS OCI runtime: crun version 1.8.1; /sys/fs/cgroup is cgroup v2',
      'PASS template sandbox-kit-proxy present: templateID tpl8k2m4q, ready',
      'PASS a sandbox reaches the internet through the proxy (198.51.100.44): sandbox sbxa1b2c3 is seen as 198.51.100.44; sandbox removed',
      "PASS root in a sandbox, its NAT table flushed, cannot leave past the proxy from the host's address: its NAT table flushed, the direct request in sandbox sbxd4e5f6 got no way out (connect ECONNREFUSED 198.51.100.7:80); sandbox removed",
    ]);
  });

  it('finds the services by their processes where systemd does not run them (the lab)', async () => {
    const results = await runSandboxHostChecks(fakeHost(healthy('node')), sandboxExpectationsFor(config, {}));
    expect(results.slice(0, 3).map(formatResult)).toEqual([
      'PASS redis-server.service active: no systemd (PID 1 is node), process check: pid 801',
      'PASS sandbox-kit-platform.service active: no systemd (PID 1 is node), process check: pid 812',
      'PASS sandbox-kit-gateway.service active: no systemd (PID 1 is node), process check: pid 840',
    ]);
    expect(results.at(-2)!.detail).toBe('sandbox sbxa1b2c3 is seen as 198.51.100.44 (no --egress-ip to compare with); sandbox removed');
  });

  it('fails the egress check when the sandbox is seen from another address, and says which', async () => {
    const results = await runSandboxHostChecks(fakeHost(healthy('systemd')), sandboxExpectationsFor(config, { egressIp: '203.0.113.9' }));
    expect(formatResult(results.at(-2)!)).toBe(
      'FAIL a sandbox reaches the internet through the proxy (203.0.113.9): sandbox sbxa1b2c3 is seen as 198.51.100.44; sandbox removed',
    );
  });

  it('reports a missing template and a refused create with what the API said', async () => {
    const refused = JSON.stringify({
      create: { status: 404, message: 'template sandbox-kit-proxy not found' },
      frames: [],
      kill: null,
      error: null,
    });
    const answers = healthy('systemd', refused).map(([p, r]): [RegExp, CommandResult] =>
      String(p).includes('templates') ? [p, ok('[]')] : [p, r],
    );
    const results = await runSandboxHostChecks(fakeHost(answers), sandboxExpectationsFor(config, {}));
    expect(results.slice(-3, -1).map(formatResult)).toEqual([
      'FAIL template sandbox-kit-proxy present: the API lists 0 templates, none named sandbox-kit-proxy (build it: docs/deploy-aws.md)',
      'FAIL a sandbox reaches the internet through the proxy: creating a sandbox failed: 404 template sandbox-kit-proxy not found',
    ]);
  });

  it('never sends the API key over SSH: it is read on the host', async () => {
    const host = fakeHost(healthy('systemd'));
    await runSandboxHostChecks(host, sandboxExpectationsFor(config, {}));
    const api = host.commands.find((c) => c.includes('/templates'))!;
    // The key file's path needs no quoting; the key itself is read on the host.
    expect(api).toContain(`$(head -n 1 ${P.apiKey})`);
    expect(host.commands.join('\n')).not.toMatch(/e2b_[a-z0-9]{10,}/);
  });

  it('on a fleet host: no gateway unit of its own, and the probe goes through the fleet gateway it was given', async () => {
    const fleet = loadStackConfig({ fleet: { hosts: 3 } });
    expect(() => sandboxExpectationsFor(fleet, {})).toThrow('a fleet host runs no gateway of its own');
    const host = fakeHost(healthy('systemd'));
    const results = await runSandboxHostChecks(host, sandboxExpectationsFor(fleet, { gatewayUrl: 'https://sandbox.example.com' }));
    expect(results.map((r) => r.name).slice(0, 2)).toEqual(['redis-server.service active', 'sandbox-kit-platform.service active']);
    expect(results.every((r) => r.ok)).toBe(true);
    const probe = host.commands.find((c) => c.includes('const gateway'))!;
    expect(probe).toContain('const gateway = "https://sandbox.example.com";');
    expect(probe).not.toContain('127.0.0.1:3000');
  });

  describe("the bypass attempt (root flushes the sandbox's NAT table and goes direct)", () => {
    const bypass = async (report: string, egressIp?: string, hostSeen: string | null = HOST_SEEN) => {
      const answers = healthy('systemd', PROBE_OK, report).map(([p, r]): [RegExp, CommandResult] =>
        String(p).includes('noproxy')
          ? [p, hostSeen === null ? { stdout: '', stderr: 'curl: (28) timed out', code: 28 } : ok(`${hostSeen}\n`)]
          : [p, r],
      );
      const host = fakeHost(answers);
      const results = await runSandboxHostChecks(host, sandboxExpectationsFor(config, egressIp ? { egressIp } : {}));
      return { result: results.at(-1)!, commands: host.commands };
    };

    it('runs as root in a sandbox of the template: flushes the NAT table, then asks the check URL directly', async () => {
      const { commands } = await bypass(BYPASS_REFUSED);
      const probe = commands.find((c) => c.includes('nat -F'))!;
      expect(probe).toContain('templateID: "sandbox-kit-proxy"');
      expect(probe).toMatch(/iptables -t nat -F && iptables -t nat -X/);
      expect(probe).toContain('Basic ');
      expect(probe).toContain('checkip.amazonaws.com');
      // The host's own address is asked from the host, past any proxy its environment names.
      expect(commands.find((c) => c.includes('--noproxy'))).toContain('http://checkip.amazonaws.com/');
    });

    it("fails when the direct request leaves from the host's own address", async () => {
      const { result } = await bypass(bypassReport(0, `${HOST_SEEN}\n`, 'iptables: nat table flushed\n'), '198.51.100.44');
      expect(formatResult(result)).toBe(
        "FAIL root in a sandbox, its NAT table flushed, cannot leave past the proxy from the host's address: its NAT table flushed, the direct request in sandbox sbxd4e5f6 was seen as 192.0.2.10, the host's own address; sandbox removed",
      );
    });

    it('fails when it leaves from any address but the egress address, and passes when it still leaves from that', async () => {
      const other = await bypass(bypassReport(0, '203.0.113.250\n', ''), '198.51.100.44');
      expect(other.result.ok).toBe(false);
      expect(other.result.detail).toContain('no NAT table to flush, the direct request in sandbox sbxd4e5f6 was seen as 203.0.113.250');
      const egress = await bypass(bypassReport(0, '198.51.100.44\n', 'iptables: nat table flushed\n'), '198.51.100.44');
      expect(egress.result).toMatchObject({ ok: true, detail: expect.stringContaining('was seen as 198.51.100.44, the egress address') });
    });

    it('without --egress-ip compares with the host address, and cannot pass with nothing to compare with', async () => {
      const seen = bypassReport(0, '203.0.113.250\n', '');
      expect((await bypass(seen)).result).toMatchObject({ ok: true, detail: expect.stringContaining("not the host's 192.0.2.10") });
      expect((await bypass(seen, undefined, null)).result).toMatchObject({
        ok: false,
        detail: expect.stringContaining('neither the egress address'),
      });
      // A failed request passes whatever is known: nothing got out.
      expect((await bypass(BYPASS_REFUSED, undefined, null)).result.ok).toBe(true);
    });
  });
});
