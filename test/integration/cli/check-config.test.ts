import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeProject, sandboxKit } from './helpers/sandbox-kit';

const VALID = `config:
  aws:region: eu-west-1
  sandbox-kit:proxy:
    port: 8388
    method: aes-256-gcm
  sandbox-kit:client:
    mode: tcp
  sandbox-kit:proxyPassword:
    secure: v1:AAAABBBBCCCC
`;

const INVALID = `config:
  sandbox-kit:proxy:
    port: 70000
    method: rc4-md5
    fastOpen: maybe
  sandbox-kit:client:
    bypassCidrs: [10.0.0.0/33]
    locallPort: 1080
  sandbox-kit:template: big
`;

describe('sandbox-kit check-config', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const project = (stacks: Record<string, string>) => {
    const dir = makeProject(stacks);
    dirs.push(dir);
    return dir;
  };

  it('exits 0 for a valid stack and says the encrypted password needs the environment for render', () => {
    const dir = project({ dev: VALID });
    const result = sandboxKit(dir, ['check-config']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`stack dev (${join(dir, 'Pulumi.dev.yaml')}): config valid`);
    expect(result.stdout).toContain('set in the stack (encrypted');
    expect(result.stdout).toContain('SANDBOX_KIT_PROXY_PASSWORD');
  });

  it('finds the project from a subdirectory, like the Pulumi CLI', () => {
    const dir = project({ dev: VALID });
    const sub = join(dir, 'infra', 'deep');
    mkdirSync(sub, { recursive: true });
    expect(sandboxKit(sub, ['check-config']).status).toBe(0);
  });

  it('exits 1 listing every problem at once, each with key, value given and what is accepted', () => {
    const result = sandboxKit(project({ dev: INVALID }), ['check-config']);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n').filter((l) => l.startsWith('  sandbox-kit:'));
    expect(lines.map((l) => l.trim().split(':').slice(0, 2).join(':')).sort()).toEqual(
      [
        'sandbox-kit:client.bypassCidrs[0]',
        'sandbox-kit:client.locallPort',
        'sandbox-kit:proxy.fastOpen',
        'sandbox-kit:proxy.method',
        'sandbox-kit:proxy.port',
        'sandbox-kit:template',
      ].sort(),
    );
    expect(result.stderr).toContain('  sandbox-kit:proxy.port: got 70000; expected a TCP/UDP port, an integer from 1 to 65535');
    expect(result.stderr).toContain('  sandbox-kit:client.locallPort: got 1080; expected no such setting (did you mean localPort?');
    expect(result.stderr).toContain('6 problems');
  });

  it('checks the stack named by --stack', () => {
    const dir = project({ dev: VALID, prod: INVALID });
    expect(sandboxKit(dir, ['check-config', '--stack', 'prod']).status).toBe(1);
    expect(sandboxKit(dir, ['check-config', '--stack', 'dev']).status).toBe(0);
  });

  it('reports a missing stack file with its path', () => {
    const dir = project({ dev: VALID });
    const result = sandboxKit(dir, ['check-config', '--stack', 'staging']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(join(dir, 'Pulumi.staging.yaml'));
  });

  it('refuses a plain-text password in the stack file without printing it', () => {
    const secret = 'plain-text-password-in-git';
    const result = sandboxKit(project({ dev: `config:\n  sandbox-kit:proxyPassword: ${secret}\n` }), ['check-config']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('sandbox-kit:proxyPassword: got (plain text, not shown)');
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it('validates the password from the environment without printing it', () => {
    const dir = project({ dev: VALID });
    const good = sandboxKit(dir, ['check-config'], { SANDBOX_KIT_PROXY_PASSWORD: 'a-long-enough-test-secret' });
    expect(good.status).toBe(0);
    expect(good.stdout).toContain('SANDBOX_KIT_PROXY_PASSWORD is set and valid (not shown)');
    expect(good.stdout + good.stderr).not.toContain('a-long-enough-test-secret');
    const bad = sandboxKit(dir, ['check-config'], { SANDBOX_KIT_PROXY_PASSWORD: 'tooshort99' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('SANDBOX_KIT_PROXY_PASSWORD: got (secret, not shown)');
    expect(bad.stdout + bad.stderr).not.toContain('tooshort99');
  });

  it('says where to run it when there is no project', () => {
    const dir = project({});
    rmSync(join(dir, 'Pulumi.yaml'));
    const result = sandboxKit(dir, ['check-config']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('no Pulumi.yaml');
  });

  it('rejects an unknown flag as a usage error (exit 2), naming the accepted ones', () => {
    const result = sandboxKit(project({ dev: VALID }), ['check-config', '--stak', 'dev']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--stack');
  });
});

describe("the project's own example stack", () => {
  it('Pulumi.dev.yaml passes check-config', () => {
    const result = sandboxKit(join(__dirname, '..', '..', '..'), ['check-config']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
