import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HOST_PATHS, renderEgressAddressScript, renderServerUnit } from '../../../src/render';

/**
 * `systemd-analyze verify` checks the unit's syntax and that every ExecStart/ExecStartPre binary exists and is
 * executable. It runs against a throwaway root (--root) that holds the host's own systemd units, the real ss-server
 * binary and the rendered egress script at their proxy-host paths, so nothing is written to this machine's /etc.
 */
const SYSTEM_UNITS = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((d) => existsSync(d)) as string;

function verify(root: string) {
  const result = spawnSync('systemd-analyze', ['verify', `--root=${root}`, HOST_PATHS.unit], { encoding: 'utf8' });
  expect(result.error).toBeUndefined();
  return { status: result.status, output: (result.stdout + result.stderr).trim() };
}

function place(root: string, path: string, content: string, mode: number): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content, { mode });
}

describe('systemd-analyze verify on the rendered ss-server unit', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skt-unit-'));
    cpSync(SYSTEM_UNITS, join(root, 'usr/lib/systemd/system'), { recursive: true });
    mkdirSync(join(root, dirname(HOST_PATHS.ssServer)), { recursive: true });
    // The unit runs the binary the Debian package installs: it must be at that path on this Debian machine too.
    cpSync(HOST_PATHS.ssServer, join(root, HOST_PATHS.ssServer));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('accepts the shared-egress unit without a warning', () => {
    place(root, HOST_PATHS.unit, renderServerUnit(), 0o644);
    expect(verify(root)).toEqual({ status: 0, output: '' });
  });

  it('accepts the dedicated-egress unit with its ExecStartPre script in place', () => {
    place(root, HOST_PATHS.unit, renderServerUnit({ egressBindAddress: '10.0.1.20' }), 0o644);
    place(root, HOST_PATHS.egressAddressScript, renderEgressAddressScript('10.0.1.20'), 0o755);
    expect(verify(root)).toEqual({ status: 0, output: '' });
  });

  it('is a real check: it refuses the dedicated-egress unit when the script it needs is missing', () => {
    place(root, HOST_PATHS.unit, renderServerUnit({ egressBindAddress: '10.0.1.20' }), 0o644);
    const result = verify(root);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(HOST_PATHS.egressAddressScript);
  });
});
