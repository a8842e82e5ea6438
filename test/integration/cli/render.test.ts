import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadStackConfig } from '../../../src/config';
import { renderArtifacts } from '../../../src/render';
import { makeProject, sandboxKit } from './helpers/sandbox-kit';

const PASSWORD = 'render-cli-test-password-7f3a';
const STACK = `config:
  sandbox-kit:proxy:
    port: "9443"
  sandbox-kit:client:
    bypassCidrs:
      - 192.0.2.0/24
  sandbox-kit:proxyPassword:
    secure: v1:AAAABBBBCCCC
`;
const ISSUE_FILES = [
  'server.json',
  'client-local.json',
  'client-transparent.json',
  'nat-chain.sh',
  'sysctl.conf',
  'server.acl',
  'ss-server.service',
  'cloud-init.yaml',
];
const mode = (path: string) => statSync(path).mode & 0o777;

describe('sandbox-kit render', () => {
  let dir: string;
  beforeEach(() => {
    dir = makeProject({ dev: STACK });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const render = (args: string[], env: Record<string, string> = { SANDBOX_KIT_PROXY_PASSWORD: PASSWORD }) =>
    sandboxKit(dir, ['render', ...args], env);

  it('writes every artifact, byte for byte what the renderers produce, with 0600 for files holding the password', () => {
    const result = render(['--out', 'out', '--server-ip', '203.0.113.10']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const out = join(dir, 'out');
    expect(mode(out)).toBe(0o700);
    const expected = renderArtifacts(loadStackConfig({ proxy: { port: '9443' }, client: { bypassCidrs: ['192.0.2.0/24'] } }), {
      serverIp: '203.0.113.10',
      password: PASSWORD,
    });
    expect(readdirSync(out).sort()).toEqual(expected.map((a) => a.name).sort());
    for (const name of ISSUE_FILES) expect(readdirSync(out)).toContain(name);
    for (const artifact of expected) {
      const path = join(out, artifact.name);
      expect({ name: artifact.name, content: readFileSync(path, 'utf8') }).toEqual({ name: artifact.name, content: artifact.content });
      expect({ name: artifact.name, mode: mode(path) }).toEqual({ name: artifact.name, mode: artifact.mode });
      if (readFileSync(path, 'utf8').includes(PASSWORD))
        expect({ name: artifact.name, mode: mode(path) }).toEqual({ name: artifact.name, mode: 0o600 });
    }
    expect(mode(join(out, 'nat-chain.sh'))).toBe(0o755);
    expect(JSON.parse(readFileSync(join(out, 'client-local.json'), 'utf8'))).toMatchObject({ server: '203.0.113.10', server_port: 9443 });
  });

  it('never prints the password, on success or failure', () => {
    const runs = [
      render(['--out', 'out', '--server-ip', '203.0.113.10', '--egress-bind', '10.0.1.20']),
      render(['--out', 'out']),
      render(['--out', 'out', '--server-ip', 'nope']),
      render(['--out', 'out', '--server-ip', '203.0.113.10'], { SANDBOX_KIT_PROXY_PASSWORD: 'short secret' }),
    ];
    expect(runs.map((r) => r.status)).toEqual([0, 2, 2, 1]);
    for (const r of runs) {
      expect(r.stdout + r.stderr).not.toContain(PASSWORD);
      expect(r.stdout + r.stderr).not.toContain('short secret');
    }
  });

  it('adds the egress script and host networks when asked', () => {
    const result = render([
      '--out',
      'out',
      '--server-ip',
      '203.0.113.10',
      '--egress-bind',
      '10.0.1.20',
      '--host-network',
      '10.0.0.0/16',
      '--host-network',
      '172.31.0.0/16',
    ]);
    expect(result.status).toBe(0);
    const out = join(dir, 'out');
    expect(mode(join(out, 'egress-address.sh'))).toBe(0o755);
    expect(readFileSync(join(out, 'ss-server.service'), 'utf8')).toContain(' -b 10.0.1.20\n');
    const acl = readFileSync(join(out, 'server.acl'), 'utf8').split('\n');
    expect(acl).toEqual(expect.arrayContaining(['10.0.0.0/16', '172.31.0.0/16']));
  });

  it('in an existing directory, replaces only its own files, tightens their modes and drops a stale egress script', () => {
    const out = join(dir, 'out');
    mkdirSync(out, { mode: 0o755 });
    writeFileSync(join(out, 'notes.txt'), 'mine');
    writeFileSync(join(out, 'server.json'), 'old', { mode: 0o644 });
    expect(render(['--out', 'out', '--server-ip', '203.0.113.10', '--egress-bind', '10.0.1.20']).status).toBe(0);
    expect(mode(join(out, 'server.json'))).toBe(0o600);
    expect(readdirSync(out)).toContain('egress-address.sh');

    expect(render(['--out', 'out', '--server-ip', '203.0.113.10']).status).toBe(0);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine');
    expect(mode(out)).toBe(0o755); // an existing directory keeps its mode
    expect(readdirSync(out)).not.toContain('egress-address.sh');
    expect(readdirSync(out).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('requires the proxy password from the environment and writes nothing without it', () => {
    const result = render(['--out', 'out', '--server-ip', '203.0.113.10'], {});
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('SANDBOX_KIT_PROXY_PASSWORD: got (not set)');
    expect(readdirSync(dir)).not.toContain('out');
  });

  it('requires --server-ip and --out, and checks every flag, listing all problems', () => {
    const result = render(['--egress-bind', '10.0.1', '--host-network', '10.0.0.0/40']);
    expect(result.status).toBe(2);
    for (const key of [
      '--out: got (missing)',
      '--server-ip: got (missing)',
      '--egress-bind: got "10.0.1"',
      '--host-network: got "10.0.0.0/40"',
    ]) {
      expect(result.stderr).toContain(key);
    }
  });

  it('writes nothing when the stack config is invalid, and lists the config errors', () => {
    writeFileSync(join(dir, 'Pulumi.dev.yaml'), 'config:\n  sandbox-kit:proxy:\n    method: rc4-md5\n');
    const result = render(['--out', 'out', '--server-ip', '203.0.113.10']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('sandbox-kit:proxy.method: got "rc4-md5"');
    expect(result.stderr).toContain('Nothing was written.');
    expect(readdirSync(dir)).not.toContain('out');
  });

  it('refuses an output path that is a file', () => {
    writeFileSync(join(dir, 'out'), 'x');
    const result = render(['--out', 'out', '--server-ip', '203.0.113.10']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('is not a directory');
  });
});
