import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { bundle, bundleEntries, SDK_RUNTIME_IMPORTS } from '../../../scripts/bundle';
import { readBundle } from '../../../infra/bundle-files';
import { BUNDLE_AGENT, BUNDLE_CLI } from '../../../infra/constants';
import { SANDBOX_HOST_PATHS } from '../../../src/render';

/**
 * The release bundle as the sandbox hosts get it: every entry built into one directory with no node_modules beside
 * it, the CLI runs its host commands from there, and the infra program accepts the directory.
 */
describe('the release bundle the hosts run', () => {
  let dir: string;
  beforeAll(async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'skt-host-bundle-')), 'lib');
    for (const entry of bundleEntries()) await bundle(entry, dir);
  }, 120_000);
  afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  const cli = (args: string[]) =>
    spawnSync(process.execPath, [join(dir, BUNDLE_CLI), ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });

  it('holds the files the units and the runtime name', () => {
    const files = readBundle(dir);
    expect(Object.keys(files.sums)).toEqual(expect.arrayContaining([BUNDLE_CLI, BUNDLE_AGENT]));
    expect(SANDBOX_HOST_PATHS.cli.endsWith(`/${BUNDLE_CLI}`)).toBe(true);
    expect(SANDBOX_HOST_PATHS.agent.endsWith(`/${BUNDLE_AGENT}`)).toBe(true);
  });

  it('runs the gateway and template commands without node_modules', () => {
    const gateway = cli(['gateway', '--help']);
    expect({ status: gateway.status, stderr: gateway.stderr }).toEqual({ status: 0, stderr: '' });
    expect(gateway.stdout).toContain('--api-key-file');
    const template = cli(['template', 'build', '--help']);
    expect(template.status).toBe(0);
    expect(template.stdout).toContain('--server-ip');
    // No API key: a usage error naming what is missing, nothing built.
    const refused = spawnSync(process.execPath, [join(dir, BUNDLE_CLI), 'template', 'build', '--server-ip', '203.0.113.10'], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('--api-key-file');
  });

  it('carries the packages the E2B SDK imports during a template build', () => {
    const text = readFileSync(join(dir, BUNDLE_CLI), 'utf8');
    for (const name of SDK_RUNTIME_IMPORTS) {
      expect(text).not.toContain(`dynamicImport(${JSON.stringify(name)})`);
      expect(text).toContain(`node_modules/${name}/`);
    }
  });
});
