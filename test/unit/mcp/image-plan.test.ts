import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { builtinCatalog } from '../../../src/mcp/catalog/load';
import { parseMcpConfig } from '../../../src/mcp/config/validate';
import { imageKey, imageResolver, parsePreinstall, preinstallCommand } from '../../../src/mcp/launch/image-dir';
import { type LaunchPlan, planLaunches } from '../../../src/mcp/launch/plan';
import { fillArgs, fillRecord } from '../../../src/mcp/launch/template';

const catalog = builtinCatalog();

describe('image and remote servers of the catalog', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-images-'));
    // grafana's image, unpacked: a filesystem with /bin/sh and what the image config says runs.
    const base = path.join(dir, imageKey('mcp/grafana'));
    fs.mkdirSync(path.join(base, 'rootfs', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(base, 'rootfs', 'bin', 'sh'), '');
    fs.writeFileSync(
      path.join(base, 'image.json'),
      JSON.stringify({
        ref: 'mcp/grafana',
        entrypoint: ['/app/mcp-grafana'],
        cmd: ['--help'],
        env: ['PATH=/app:/usr/bin', 'LANG=C'],
        workingDir: '/app',
      }),
    );
    // notion's fetch failed: the reason is what the gateway reports.
    fs.mkdirSync(path.join(dir, imageKey('mcp/notion')));
    fs.writeFileSync(path.join(dir, imageKey('mcp/notion'), 'error'), 'registry answered 404 for mcp/notion:latest\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const options = () => ({
    node: '/opt/node',
    resolveBin: () => '/x',
    resolveImage: imageResolver([dir]),
    stateDir: '/run/gw',
  });

  test('an image server runs its entrypoint in its own filesystem, with its arguments and env, the secret only in env', () => {
    const config = parseMcpConfig({ grafana: { apiKey: 'glsa-SECRET', url: 'http://grafana.local:3000' } }, catalog);
    const [plan] = planLaunches(config, catalog, options()) as LaunchPlan[];
    expect(plan.command).toBe('/usr/sbin/chroot');
    expect(plan.args).toEqual([
      path.join(dir, 'mcp_grafana', 'rootfs'),
      '/bin/sh',
      '-c',
      'cd "$0" && exec "$@"',
      '/app',
      '/app/mcp-grafana',
      '--transport=stdio',
    ]);
    expect(plan.env).toEqual({
      PATH: '/app:/usr/bin',
      LANG: 'C',
      GRAFANA_URL: 'http://grafana.local:3000',
      GRAFANA_API_KEY: 'glsa-SECRET',
    });
    expect(plan.args.join(' ')).not.toContain('glsa-SECRET');
  });

  test('an image that could not be fetched, or is not there, is a failed plan with the reason; the others still plan', () => {
    const config = parseMcpConfig(
      { notion: { internalIntegrationToken: 'ntn-SECRET' }, time: {}, grafana: { apiKey: 'k', url: 'u' } },
      catalog,
    );
    const plans = planLaunches(config, catalog, options());
    expect(plans.find((p) => p.name === 'notion')).toEqual({
      name: 'notion',
      error: 'image mcp/notion could not be fetched: registry answered 404 for mcp/notion:latest',
    });
    expect(plans.find((p) => p.name === 'time')).toEqual({
      name: 'time',
      error: expect.stringMatching(/^image mcp\/time is not in this sandbox/),
    });
    expect(plans.find((p) => p.name === 'grafana')).toHaveProperty('command', '/usr/sbin/chroot');
    expect(JSON.stringify(plans.filter((p) => 'error' in p))).not.toContain('ntn-SECRET');
  });

  test('a remote server is reached at its URL with its secret in a header', () => {
    const config = parseMcpConfig({ dappierRemote: { dappierRemoteApiKey: 'dp-SECRET' } }, catalog);
    const [plan] = planLaunches(config, catalog, options()) as LaunchPlan[];
    expect(plan.remote).toEqual({
      url: 'https://mcp.dappier.com/mcp',
      transport: 'streamable-http',
      headers: { Authorization: 'Bearer dp-SECRET' },
    });
    expect(plan.args).toEqual([]);
  });

  test('templates: a list spreads into arguments, an unset property leaves its argument and env var out', () => {
    expect(
      fillArgs(['--transport=stdio', '{{paths|into}}', '--level={{level}}', '--ns={{ns}}'], { paths: ['/a', '/b'], level: 'ro' }),
    ).toEqual(['--transport=stdio', '/a', '/b', '--level=ro']);
    expect(fillRecord({ A: '{{x}}', B: 'Bearer {{y}}', C: 'fixed', D: '{{list}}' }, { x: 1, list: ['p', 'q'] })).toEqual({
      A: '1',
      C: 'fixed',
      D: 'p,q',
    });
  });
});

describe("a template's preinstall list", () => {
  test('one reference a line, each once; blank lines and comments skipped', () => {
    expect(parsePreinstall('mcp/time\n\n# from addMcpServer\nmcp/grafana\nmcp/time\n  ghcr.io/org/x:1  \n')).toEqual([
      'mcp/time',
      'mcp/grafana',
      'ghcr.io/org/x:1',
    ]);
  });

  test('a line that is no image reference is refused by name, as is a list past the limit', () => {
    expect(() => parsePreinstall('mcp/time\n$(reboot)\nMCP/Upper')).toThrow(
      '/opt/mcp-images/preinstall: not image references: "$(reboot)", "MCP/Upper"',
    );
    const many = Array.from({ length: 65 }, (_, i) => `mcp/s${i}`).join('\n');
    expect(() => parsePreinstall(many)).toThrow('65 images; at most 64 may be preinstalled');
  });

  test('the build step appends checked references only', () => {
    expect(preinstallCommand(['mcp/time'])).toBe("mkdir -p /opt/mcp-images && printf '%s\\n' 'mcp/time' >> /opt/mcp-images/preinstall");
    expect(() => preinstallCommand(["mcp/x' ; rm -rf / '"])).toThrow('not an image reference');
  });
});
