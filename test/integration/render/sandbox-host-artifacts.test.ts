import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadStackConfig } from '../../../src/config';
import { SANDBOX_HOST_PATHS as P, SANDBOX_UNITS, sandboxHostFiles, type SandboxHostInputs } from '../../../src/render';

const ROLES: SandboxHostInputs['role'][] = ['single', 'fleet-host', 'fleet-gateway'];

function inputs(role: SandboxHostInputs['role']): SandboxHostInputs {
  return {
    role,
    apiKey: 'integration-test-api-key-0123456789',
    bundle: {
      bucket: 'bucket-0123',
      key: 'bundle.zip',
      region: 'eu-west-1',
      sums: { 'sandbox-kit.js': 'c'.repeat(64), 'agent.js': 'd'.repeat(64) },
    },
    proxyIngressIp: '203.0.113.10',
    hostNetworks: ['10.0.0.0/16'],
    catalog: 'redis://catalog.example:6379/0',
    resumeUrl: 'http://api.example:3001',
    ...(role === 'single' ? {} : { catalogPassword: 'integration-test-redis-auth-token' }),
  };
}

const configs = {
  defaults: loadStackConfig({}),
  custom: loadStackConfig({ proxy: { mode: 'tcp_only', port: 9443 }, sandboxHost: { apiPort: 8443 }, gateway: { port: 8080 } }),
};

/** Every shell script a sandbox-side machine gets, in every role and config, passes shellcheck with every check. */
describe('shellcheck on the sandbox host scripts', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'skt-sandbox-sh-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const [label, config] of Object.entries(configs)) {
    for (const role of ROLES) {
      const scripts = sandboxHostFiles(config, inputs(role)).filter((f) => f.content.startsWith('#!/bin/sh'));
      it(`${role} (${label}): every script is clean`, () => {
        expect(scripts.length).toBeGreaterThanOrEqual(role === 'fleet-gateway' ? 2 : 4);
        for (const script of scripts) {
          const path = join(dir, `${label}-${role}-${script.path.replace(/\//g, '_')}`);
          writeFileSync(path, script.content, { mode: 0o755 });
          const result = spawnSync('shellcheck', ['--severity=style', '--format=gcc', path], { encoding: 'utf8' });
          expect(result.error).toBeUndefined();
          expect({ script: script.path, output: result.stdout + result.stderr }).toEqual({ script: script.path, output: '' });
        }
      });
    }
  }
});

const SYSTEM_UNITS = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((d) => existsSync(d)) as string;

/**
 * `systemd-analyze verify` on every rendered unit, against a throwaway root holding this Debian machine's units
 * (redis-server's among them), node at the path the units name, and the rendered files at their host paths.
 */
describe('systemd-analyze verify on the sandbox host units', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skt-sandbox-units-'));
    cpSync(SYSTEM_UNITS, join(root, 'usr/lib/systemd/system'), { recursive: true });
    mkdirSync(join(root, dirname(P.node)), { recursive: true });
    cpSync(P.node, join(root, P.node));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function lay(files: ReturnType<typeof sandboxHostFiles>): void {
    for (const f of files) {
      mkdirSync(dirname(join(root, f.path)), { recursive: true });
      writeFileSync(join(root, f.path), f.content, { mode: parseInt(f.permissions, 8) });
    }
  }

  function verify(units: string[]) {
    const result = spawnSync('systemd-analyze', ['verify', `--root=${root}`, ...units.map((u) => `${P.units}/${u}`)], { encoding: 'utf8' });
    expect(result.error).toBeUndefined();
    return { status: result.status, output: (result.stdout + result.stderr).trim() };
  }

  for (const role of ROLES) {
    it(`accepts every unit of a ${role} without a warning`, () => {
      const files = sandboxHostFiles(configs.defaults, inputs(role));
      lay(files);
      const units = files.filter((f) => f.path.startsWith(`${P.units}/`)).map((f) => f.path.slice(P.units.length + 1));
      expect(units.length).toBeGreaterThan(0);
      expect(verify(units)).toEqual({ status: 0, output: '' });
    });
  }

  it('is a real check: it refuses the network unit when its script is missing', () => {
    lay(sandboxHostFiles(configs.defaults, inputs('single')).filter((f) => f.path !== P.networkScript));
    const result = verify([SANDBOX_UNITS.network]);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(P.networkScript);
  });
});
