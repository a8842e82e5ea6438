import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gatewayWrapperScript } from '../../../src/mcp/template/wrapper';
import { runScript } from './helpers/node-script';

interface TemplateJson {
  fromImage?: string;
  startCmd?: string;
  steps: { type: string; args: string[] }[];
  error?: string;
  build?: unknown;
}

async function templateJson(servers?: string[]): Promise<TemplateJson> {
  const result = await runScript(
    path.join(__dirname, 'helpers', 'template-json.ts'),
    servers === undefined ? [] : [JSON.stringify(servers)],
  );
  if (result.code !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as TemplateJson;
}

describe('the mcp-gateway template', () => {
  test('Debian with node for the build, the mcp-gateway command, and every catalog npm server preinstalled at its pinned version', async () => {
    const json = await templateJson();
    expect(json.build).toEqual({ alias: 'mcp-gateway', memoryMB: 1024, cpuCount: 1 });
    expect(json.fromImage).toBe('debian:bookworm');
    const runs = json.steps.filter((s) => s.type === 'RUN').map((s) => s.args[0]);
    expect(runs[0]).toContain('apt-get install -y ca-certificates curl nodejs');
    const wrapper = /echo (\S+) \| base64 -d > \/usr\/local\/bin\/mcp-gateway && chmod 0755/.exec(runs[1]);
    expect(Buffer.from(wrapper?.[1] ?? '', 'base64').toString()).toBe(gatewayWrapperScript());
    for (const pkg of ['server-filesystem', 'server-memory', 'server-everything', 'server-sequential-thinking']) {
      expect(runs[2]).toContain(`@modelcontextprotocol/${pkg}@2026.8.31`);
    }
    expect(runs[2]).toContain('cd /opt/mcp-servers');
    // npm itself comes from the registry, checked against its published sha512.
    expect(runs[2]).toMatch(/curl -fsSL https:\/\/registry\.npmjs\.org\/npm\/-\/npm-10\.9\.2\.tgz .* sha512sum -c/);
    expect(json.startCmd).toBeUndefined();
  });

  test('a subset of servers can be preinstalled; an unknown one is refused by name', async () => {
    const json = await templateJson(['memory']);
    expect(json.steps.at(-1)?.args[0]).toMatch(/npm-cli\.js install [^&]* @modelcontextprotocol\/server-memory@2026\.8\.31 &&/);
    expect(json.steps.at(-1)?.args[0]).not.toContain('server-filesystem');
    expect((await templateJson(['memroy'])).error).toBe('cannot pull: memroy: not in the catalog');
  });

  test('an image server is named in the preinstall list the template builder reads; a remote one is refused', async () => {
    const json = await templateJson(['memory', 'time', 'grafana']);
    const runs = json.steps.filter((s) => s.type === 'RUN').map((s) => s.args[0]);
    expect(runs.at(-1)).toBe("mkdir -p /opt/mcp-images && printf '%s\\n' 'mcp/time' 'mcp/grafana' >> /opt/mcp-images/preinstall");
    expect(json.steps.find((s) => s.type === 'RUN' && s.args[0] === runs.at(-1))?.args[1]).toBe('root');
    expect(runs.at(-2)).toContain('@modelcontextprotocol/server-memory@2026.8.31');
    expect((await templateJson(['context7'])).error).toBe('cannot pull: context7: served by its vendor over HTTP, nothing to install');
  });

  test('the wrapper runs the gateway bundle with the payload node, passing every argument', () => {
    const payload = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-payload-'));
    try {
      fs.mkdirSync(path.join(payload, 'bundle'));
      fs.symlinkSync(process.execPath, path.join(payload, 'node'));
      fs.writeFileSync(path.join(payload, 'bundle', 'mcp-gateway.js'), 'console.log(JSON.stringify(process.argv.slice(2)))');
      fs.writeFileSync(path.join(payload, 'mcp-gateway'), gatewayWrapperScript(payload), { mode: 0o755 });
      const out = execFileSync(path.join(payload, 'mcp-gateway'), ['--config', '{"memory": {}}'], { encoding: 'utf8' });
      expect(JSON.parse(out)).toEqual(['--config', '{"memory": {}}']);
    } finally {
      fs.rmSync(payload, { recursive: true, force: true });
    }
  });
});
