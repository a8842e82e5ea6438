/** The supervisor's unit parser (pure; no namespaces needed). */
import { loadStackConfig } from '../../../src/config';
import {
  expandCommand,
  parseEnvironmentFile,
  parseServiceUnit,
  parseTimeSpan,
  shouldRestart,
  splitCommandLine,
} from '../../../src/lab/unit-file';
import { cappedLimit, withFileLimit } from '../../../src/lab/supervisor';
import {
  LOCAL_REDIS_CATALOG,
  LOCAL_REDIS_STATE,
  renderPlatformUnit,
  renderServerUnit,
  SANDBOX_HOST_PATHS,
  serverCommand,
  unitVariable,
} from '../../../src/render';

test('reads the rendered ss-server unit: pre-start script, command, restart policy and file limit', () => {
  const unit = parseServiceUnit(renderServerUnit({ egressBindAddress: '198.18.1.11' }));
  expect(unit.execStartPre.map((c) => c.argv)).toEqual([['/etc/sandbox-kit/egress-address.sh']]);
  expect(unit.execStart.argv).toEqual(serverCommand({ egressBindAddress: '198.18.1.11' }).split(' '));
  expect(unit.restart).toBe('always');
  expect(unit.restartSec).toBe(2);
  expect(unit.limitNoFile).toEqual({ soft: 51200, hard: 51200 });
  expect(parseServiceUnit(renderServerUnit()).execStartPre).toEqual([]);
});

test('follows systemd for quoting, prefixes, continuation lines, sections and defaults', () => {
  const unit = parseServiceUnit(
    [
      '[Unit]',
      'ExecStart=/not/the/service',
      '[Service]',
      '# comment',
      'ExecStartPre=-/bin/prep "a b" \'c d\' e\\ f',
      'ExecStart=/usr/bin/x \\',
      '  --flag',
      'LimitNOFILE=1024:4096',
      '[Install]',
      'Restart=always',
    ].join('\n'),
  );
  expect(unit.execStartPre).toEqual([{ argv: ['/bin/prep', 'a b', 'c d', 'e f'], ignoreFailure: true }]);
  expect(unit.execStart).toEqual({ argv: ['/usr/bin/x', '--flag'], ignoreFailure: false });
  expect(unit.limitNoFile).toEqual({ soft: 1024, hard: 4096 });
  expect(unit.restart).toBe('no');
  expect(unit.restartSec).toBe(0.1);
  expect(splitCommandLine('  a  "b c"  ')).toEqual(['a', 'b c']);
});

test('time spans', () => {
  expect(parseTimeSpan('2')).toBe(2);
  expect(parseTimeSpan('500ms')).toBe(0.5);
  expect(parseTimeSpan('1min 30s')).toBe(90);
  expect(() => parseTimeSpan('soon')).toThrow(/invalid time span "soon"/);
});

test('bad units are refused with the line and key', () => {
  expect(() => parseServiceUnit('[Service]\nRestart=always\n', 'x.service')).toThrow(/x\.service: no ExecStart=/);
  expect(() => parseServiceUnit('[Service]\nExecStart=/a\nRestart=sometimes\n', 'x.service')).toThrow(
    /line 3: Restart: .*one of no, always/,
  );
  expect(() => parseServiceUnit('[Service]\nExecStart=relative/path\n')).toThrow(/absolute path/);
  expect(() => parseServiceUnit('[Service]\nExecStart=/a\nLimitNOFILE=lots\n')).toThrow(/LimitNOFILE/);
  expect(() => parseServiceUnit('[Service]\nExecStart=/a "open\n')).toThrow(/unterminated/);
  expect(() => parseServiceUnit('[Service]\nExecStart=/a\nExecStart=/b\n')).toThrow(/given twice/);
});

test('restart decisions per policy', () => {
  expect(shouldRestart('always', 0, null)).toBe(true);
  expect(shouldRestart('no', null, 'SIGKILL')).toBe(false);
  expect(shouldRestart('on-failure', 1, null)).toBe(true);
  expect(shouldRestart('on-failure', 0, null)).toBe(false);
  expect(shouldRestart('on-failure', null, 'SIGKILL')).toBe(true);
  expect(shouldRestart('on-success', null, 'SIGTERM')).toBe(true);
  expect(shouldRestart('on-abnormal', 1, null)).toBe(false);
  expect(shouldRestart('on-abnormal', null, 'SIGSEGV')).toBe(true);
});

test('the file limit wraps the command with prlimit, capped at the hard limit when it cannot be raised', () => {
  expect(withFileLimit({ soft: 51200, hard: 51200 }, ['/usr/bin/ss-server', '-c', 'f'])).toEqual([
    'prlimit',
    '--nofile=51200:51200',
    '--',
    '/usr/bin/ss-server',
    '-c',
    'f',
  ]);
  expect(withFileLimit(undefined, ['/a'])).toEqual(['/a']);
  expect(cappedLimit({ soft: 51200, hard: 51200 }, 20000)).toEqual({ soft: 20000, hard: 20000 });
  expect(cappedLimit({ soft: 1024, hard: 4096 }, 20000)).toEqual({ soft: 1024, hard: 4096 });
});

test('environment: Environment= words, EnvironmentFile= entries, and the files they name', () => {
  const unit = parseServiceUnit(
    [
      '[Service]',
      'ExecStart=/a',
      'Environment=A=1 "B=two words"',
      'Environment=A=3',
      'EnvironmentFile=-/etc/x.env',
      'EnvironmentFile=/etc/y.env',
      'ExecStartPost=-/bin/post one',
      'ExecStartPost=/bin/post two',
    ].join('\n'),
  );
  expect(unit.environment).toEqual({ A: '3', B: 'two words' });
  expect(unit.environmentFiles).toEqual([
    { path: '/etc/x.env', optional: true },
    { path: '/etc/y.env', optional: false },
  ]);
  expect(unit.execStartPost).toEqual([
    { argv: ['/bin/post', 'one'], ignoreFailure: true },
    { argv: ['/bin/post', 'two'], ignoreFailure: false },
  ]);
  expect(parseEnvironmentFile('# proxy\nhttp_proxy="http://10.0.0.1:3128"\n\n; other\nno_proxy=localhost\n', 'f')).toEqual({
    http_proxy: 'http://10.0.0.1:3128',
    no_proxy: 'localhost',
  });
  expect(() => parseEnvironmentFile('export http_proxy=x\n', '/etc/x.env')).toThrow(/\/etc\/x\.env line 1: expected NAME=VALUE/);
  expect(() => parseServiceUnit('[Service]\nExecStart=/a\nEnvironment=novalue\n')).toThrow(/line 3: Environment: expected NAME=VALUE/);
  expect(() => parseServiceUnit('[Service]\nExecStart=/a\nEnvironmentFile=relative.env\n')).toThrow(/absolute path/);
});

test("the rendered platform units: the optional site settings file, and a fleet host's facts from the metadata", () => {
  const options = {
    catalog: LOCAL_REDIS_CATALOG,
    catalogPasswordFile: SANDBOX_HOST_PATHS.redisPassword,
    state: LOCAL_REDIS_STATE,
    localRedis: true,
    proxyIngressIp: '203.0.113.10',
  };
  const single = parseServiceUnit(renderPlatformUnit(loadStackConfig({}), options));
  expect(single.environmentFiles).toEqual([{ path: SANDBOX_HOST_PATHS.platformEnv, optional: true }]);
  expect(single.environment).toEqual({ NODE_ENV: 'production' });
  expect(single.execStart.argv).toContain('--route-out');
  expect(single.execStart.argv).not.toContain('--host-id');
  const fleet = parseServiceUnit(renderPlatformUnit(loadStackConfig({}), { ...options, fleet: true }));
  expect(fleet.environmentFiles).toEqual([
    { path: SANDBOX_HOST_PATHS.platformEnv, optional: true },
    { path: SANDBOX_HOST_PATHS.hostFacts, optional: false },
  ]);
  const args = fleet.execStart.argv.join(' ');
  const v = unitVariable;
  expect(args).toContain(
    `--sandbox-subnet ${v('SANDBOX_SUBNET')} --host-id ${v('HOST_ID')} --advertise-url http://${v('HOST_ADDRESS')}:3001`,
  );
  expect(v('HOST_ID')).toBe('$' + '{HOST_ID}');
  // What the supervisor then runs, with the facts file read.
  const expanded = expandCommand(fleet.execStart.argv, { SANDBOX_SUBNET: '10.0.1.16/28', HOST_ID: 'i-1', HOST_ADDRESS: '10.0.0.23' });
  expect(expanded.join(' ')).toContain('--sandbox-subnet 10.0.1.16/28 --host-id i-1 --advertise-url http://10.0.0.23:3001');
  expect(expandCommand([`a${v('UNSET')}b`], {})).toEqual(['ab']);
});
