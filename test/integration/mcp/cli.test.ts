import * as os from 'node:os';
import { sandboxKit } from '../cli/helpers/sandbox-kit';

/** `sandbox-kit mcp` from the built CLI (npm test builds before jest runs). */
describe('sandbox-kit mcp', () => {
  test('list shows every catalog server with its properties; --json too', () => {
    const text = sandboxKit(os.tmpdir(), ['mcp', 'list']);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('filesystem: Reference server');
    expect(text.stdout).toContain('  paths: a list of strings');
    expect(text.stdout).toContain('sequentialThinking (also sequentialthinking)');
    const json = sandboxKit(os.tmpdir(), ['mcp', 'list', '--json']);
    const servers = JSON.parse(json.stdout) as {
      name: string;
      runs: string;
      properties: { name: string; required: boolean; secret: boolean }[];
    }[];
    // The whole public catalog (over 200 servers) with the kit's reference servers.
    expect(servers.length).toBeGreaterThan(200);
    expect(servers.map((s) => s.name)).toEqual(
      expect.arrayContaining(['everything', 'filesystem', 'memory', 'sequentialThinking', 'airtable', 'aks']),
    );
    expect(servers.find((s) => s.name === 'airtable')?.properties).toEqual([
      expect.objectContaining({ name: 'airtableApiKey', required: true, secret: true }),
      expect.objectContaining({ name: 'nodeenv', required: true, secret: false }),
    ]);
    expect(servers.find((s) => s.name === 'airtable')?.runs).toBe('image mcp/airtable-mcp-server');
    expect(servers.find((s) => s.name === 'filesystem')?.runs).toBe('npm @modelcontextprotocol/server-filesystem@2026.8.31');
    expect(text.stdout).toContain('airtable: Runs the OCI image mcp/airtable-mcp-server');
    expect(servers.find((s) => s.name === 'filesystem')?.properties).toEqual([
      expect.objectContaining({ name: 'paths', required: true, secret: false }),
    ]);
  });

  test('check: exit 0 for a valid config, 1 naming every problem, 2 for usage errors', () => {
    const ok = sandboxKit(os.tmpdir(), [
      'mcp',
      'check',
      '--config',
      '{"filesystem":{"paths":["/home/user"]},"custom":{"x":{"runCmd":"srv"}}}',
    ]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('mcp config valid: filesystem, x (custom)');
    const bad = sandboxKit(os.tmpdir(), ['mcp', 'check', '--config', '{"filesystem":{"paths":"/home"},"memori":{}}']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('mcp.filesystem.paths: got "/home"; expected a list of strings');
    expect(bad.stderr).toContain('did you mean memory?');
    expect(sandboxKit(os.tmpdir(), ['mcp', 'check', '--config', '{nope']).status).toBe(2);
    expect(sandboxKit(os.tmpdir(), ['mcp', 'check']).status).toBe(2);
    expect(sandboxKit(os.tmpdir(), ['mcp', 'nosuch']).status).toBe(2);
  });
});
