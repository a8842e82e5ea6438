import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStackConfig } from '../../../src/config';
import { renderArtifacts } from '../../../src/render';

/** Every shell artifact, in the configurations that change its text, must pass shellcheck (real binary, all checks). */
describe('shellcheck on every rendered shell script', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'skt-shellcheck-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const configs = {
    defaults: loadStackConfig({}),
    custom: loadStackConfig({ client: { localPort: 1081, redirectPort: 12346, bypassCidrs: ['192.0.2.0/24', '198.51.100.7/32'] } }),
  };

  for (const [label, config] of Object.entries(configs)) {
    const scripts = renderArtifacts(config, {
      serverIp: '203.0.113.10',
      password: 'shellcheck-test-password',
      egressBindAddress: '10.0.1.20',
    }).filter((a) => a.name.endsWith('.sh'));

    it(`renders the four scripts (${label})`, () => {
      expect(scripts.map((s) => s.name).sort()).toEqual([
        'client-start-local.sh',
        'client-start-transparent.sh',
        'egress-address.sh',
        'nat-chain.sh',
      ]);
    });

    for (const script of scripts) {
      it(`${script.name} (${label}) is clean`, () => {
        const path = join(dir, `${label}-${script.name}`);
        writeFileSync(path, script.content, { mode: script.mode });
        // Every default check at every severity (style included); the shebang selects POSIX sh.
        const result = spawnSync('shellcheck', ['--severity=style', '--format=gcc', path], { encoding: 'utf8' });
        expect(result.error).toBeUndefined();
        expect(result.stdout + result.stderr).toBe('');
        expect(result.status).toBe(0);
      });
    }
  }
});
