/**
 * `sandbox-kit template build` builds both proxy templates through the template API with the SDK, printing the logs
 * live: the rendered client files sit in the template with their modes, the client binaries are installed, and the
 * build's start check saw the client listen (1080; transparent mode also 12345 after applying the NAT chain).
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderClientConfig } from '../../../src/render';
import { loadStack } from '../../../src/cli/stack';
import { runEntry } from '../../helpers/node-script';
import { API_KEY, runIn, startTemplatePlatform, type TemplatePlatform } from '../platform/templates/helpers/template-platform';
import { CLI_SOURCE } from '../../helpers/cli';

jest.setTimeout(600_000);

const SERVER_IP = '203.0.113.10';
const PASSWORD = 'template-test-password-0123456789';

let platform: TemplatePlatform;
let secrets: string;

beforeAll(async () => {
  platform = await startTemplatePlatform();
  secrets = await mkdtemp(join(tmpdir(), 'sk-tpl-key-'));
  await writeFile(join(secrets, 'api-key'), `${API_KEY}\n`);
  await chmod(join(secrets, 'api-key'), 0o600);
});

afterAll(async () => {
  await platform?.stop();
  if (secrets) await rm(secrets, { recursive: true, force: true });
});

async function cliBuild(mode: string, alias: string, extra: string[] = []) {
  const lines: string[] = [];
  const result = await runEntry(CLI_SOURCE, {
    args: [
      'template',
      'build',
      '--stack',
      'dev',
      '--mode',
      mode,
      '--server-ip',
      SERVER_IP,
      '--api-url',
      platform.url,
      '--api-key-file',
      join(secrets, 'api-key'),
      '--alias',
      alias,
      ...extra,
    ],
    env: { SANDBOX_KIT_PROXY_PASSWORD: PASSWORD },
    onLine: (l) => lines.push(l),
  });
  if (result.code !== 0) throw new Error(`template build exited ${result.code}: ${result.stderr}\n${lines.slice(-30).join('\n')}`);
  return lines;
}

test.each([
  ['local', ['client-local.json', 'client-start-local.sh'], ['ss-local']],
  [
    'transparent',
    ['client-local.json', 'client-start-transparent.sh', 'client-transparent.json', 'nat-chain.sh'],
    ['ss-local', 'ss-redir', 'iptables'],
  ],
])('the %s proxy template builds from the rendered files and starts its client', async (mode, files, binaries) => {
  const alias = `proxy-${mode}-${Date.now().toString(36)}`;
  const lines = await cliBuild(mode, alias);
  expect(lines[0]).toBe(`template build: ${alias} (${mode} mode, 1 CPU, 1024 MB) from stack dev via ${platform.url}`);
  expect(lines.some((l) => / INFO {2}Setting up shadowsocks-libev/.test(l))).toBe(true);
  expect(lines.some((l) => /ready command succeeded/.test(l))).toBe(true);
  expect(lines.at(-1)).toMatch(new RegExp(`^template build: ${alias} is ready: templateID [a-z0-9]+, buildID [0-9a-f-]{36}$`));

  const t = await platform.service.resolve(alias);
  expect(t).toMatchObject({ memoryMB: 1024, cpuCount: 1, user: 'root', startCmd: `/etc/sandbox-kit/client-start-${mode}.sh` });
  const probe = await runIn(
    platform,
    t!,
    `cd /etc/sandbox-kit && stat -c '%n %a %U' * && command -v ${binaries.join(' ')} >/dev/null && cat client-local.json`,
  );
  expect(probe.code).toBe(0);
  const [statLines, config] = [probe.out.split('\n').slice(0, files.length), probe.out.split('\n').slice(files.length).join('\n')];
  expect(statLines).toEqual(files.map((f) => `${f} ${f.endsWith('.sh') ? 755 : 600} root`));
  // The template carries exactly what src/render renders for this stack.
  const stack = loadStack('dev', join(__dirname, '..', '..', '..')).config!;
  expect(`${config}\n`).toBe(renderClientConfig(stack, { serverIp: SERVER_IP, password: PASSWORD }, 'local'));
});
