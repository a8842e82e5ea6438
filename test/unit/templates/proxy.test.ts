import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStackConfig } from '../../../src/config';
import { renderArtifacts } from '../../../src/render';
import { PROXY_TEMPLATE_FILES, proxyPorts, withBypass, writeProxyContext } from '../../../templates/proxy-files';

const config = loadStackConfig({});
const target = { serverIp: '203.0.113.10', password: 'unit-test-password-0123456789' };

test.each(['local', 'transparent'] as const)(
  'the %s context holds exactly the rendered files of its mode, with their modes',
  async (mode) => {
    const dir = await mkdtemp(join(tmpdir(), 'sk-tpl-unit-'));
    try {
      await writeProxyContext(dir, config, target, mode);
      expect((await readdir(dir)).sort()).toEqual([...PROXY_TEMPLATE_FILES[mode]].sort());
      const rendered = renderArtifacts(config, { ...target, hostNetworks: [] });
      for (const name of PROXY_TEMPLATE_FILES[mode]) {
        const artifact = rendered.find((a) => a.name === name)!;
        expect(await readFile(join(dir, name), 'utf8')).toBe(artifact.content);
        expect((await stat(join(dir, name))).mode & 0o777).toBe(artifact.mode);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test('ports the started template listens on', () => {
  expect(proxyPorts(config, 'local')).toEqual([1080]);
  expect(proxyPorts(config, 'transparent')).toEqual([12345, 1080]);
});

test('extra bypassed destinations reach the NAT chain; anything but a CIDR is refused', () => {
  const chain = renderArtifacts(withBypass(config, ['198.18.0.0/15']), { ...target, hostNetworks: [] }).find(
    (a) => a.name === 'nat-chain.sh',
  )!;
  expect(chain.content).toContain('198.18.0.0/15');
  expect(withBypass(config, [])).toBe(config);
  expect(() => withBypass(config, ['198.18.0.0/15', '$(reboot)'])).toThrow(
    'bypassCidrs: got "$(reboot)"; expected IPv4 CIDRs such as 198.18.0.0/15',
  );
});
