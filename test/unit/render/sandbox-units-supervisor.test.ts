import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServiceUnit } from '../../../src/lab/unit-file';
import {
  LOCAL_REDIS_CATALOG,
  LOCAL_REDIS_STATE,
  SANDBOX_HOST_PATHS as P,
  SANDBOX_UNITS,
  gatewayCommand,
  platformCommand,
  sandboxHostFiles,
} from '../../../src/render';
import { bundleSums, layOutSandboxHost } from '../../helpers/sandbox-host-layout';
import { defaults, SERVER_IP } from './helpers/stack-fixtures';
import { sandboxInputs } from './helpers/sandbox-fixtures';

/** The lab runs the sandbox host's units under its supervisor: it must read them as systemd would. */
describe('sandbox host units under the lab supervisor', () => {
  const unit = (name: string) => sandboxHostFiles(defaults, sandboxInputs('single')).find((f) => f.path === `${P.units}/${name}`)!.content;

  it('runs the platform and the gateway with the rendered command lines, restarting always', () => {
    const platform = parseServiceUnit(unit(SANDBOX_UNITS.platform));
    expect(platform.execStart.argv).toEqual(
      platformCommand(defaults, {
        catalog: LOCAL_REDIS_CATALOG,
        catalogPasswordFile: P.redisPassword,
        state: LOCAL_REDIS_STATE,
        proxyIngressIp: SERVER_IP,
      }),
    );
    expect(platform).toMatchObject({ restart: 'always', restartSec: 2, limitNoFile: { soft: 65536, hard: 65536 } });
    const gateway = parseServiceUnit(unit(SANDBOX_UNITS.gateway));
    expect(gateway.execStart.argv).toEqual(
      gatewayCommand(defaults, {
        catalog: LOCAL_REDIS_CATALOG,
        catalogPasswordFile: P.redisPassword,
        resumeUrl: 'http://127.0.0.1:3001',
        apiUpstream: '127.0.0.1:3001',
      }),
    );
    expect(gateway.restart).toBe('always');
  });

  it('runs the network rules once, from the script cloud-init wrote', () => {
    const network = parseServiceUnit(unit(SANDBOX_UNITS.network));
    expect(network.execStart.argv).toEqual([P.networkScript, 'up']);
    expect(network.restart).toBe('no');
  });
});

describe('laying out a sandbox host for a lab node', () => {
  let dir: string;
  let bundleDir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skt-layout-'));
    bundleDir = join(dir, 'bundle');
    mkdirSync(bundleDir);
    writeFileSync(join(bundleDir, 'sandbox-kit.js'), '// cli\n');
    writeFileSync(join(bundleDir, 'agent.js'), '// agent\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('puts every file at its host path with its mode, and the bundle where the units run it', () => {
    const inputs = { ...sandboxInputs('single'), bundle: { ...sandboxInputs('single').bundle, sums: bundleSums(bundleDir) } };
    const layout = layOutSandboxHost(join(dir, 'node'), defaults, inputs, bundleDir);
    const key = join(layout.etcLayer, P.apiKey.slice('/etc/'.length));
    expect(readFileSync(key, 'utf8')).toBe(`${inputs.apiKey}\n`);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(statSync(join(layout.etcLayer, P.networkScript.slice('/etc/'.length))).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(layout.optDir, 'dist/bundle/sandbox-kit.js'), 'utf8')).toBe('// cli\n');
    expect(existsSync(join(layout.optDir, 'package.json'))).toBe(true);
    expect(statSync(join(layout.optDir, 'bin/sandbox-kit')).mode & 0o777).toBe(0o755);
    expect(layout.units.sort()).toEqual(
      [SANDBOX_UNITS.gateway, SANDBOX_UNITS.network, SANDBOX_UNITS.platform].map((u) => `${P.units}/${u}`).sort(),
    );
  });

  it('refuses a bundle that does not match the sums the user data carries', () => {
    const inputs = {
      ...sandboxInputs('single'),
      bundle: { ...sandboxInputs('single').bundle, sums: { ...bundleSums(bundleDir), 'agent.js': 'f'.repeat(64) } },
    };
    expect(() => layOutSandboxHost(join(dir, 'node'), defaults, inputs, bundleDir)).toThrow(
      /bundle file agent.js: sha256 [0-9a-f]{64}, the user data says f{64}/,
    );
  });
});
