import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { mcpImageRoots } from '../../../../src/platform/sandboxes/mcp-images';

describe('the MCP image filesystems a sandbox gets /proc and /dev for', () => {
  let dir: string;
  const layer = (name: string, files: Record<string, string | null>) => {
    const root = path.join(dir, name);
    for (const [rel, content] of Object.entries(files)) {
      const at = path.join(root, rel);
      fs.mkdirSync(content === null ? at : path.dirname(at), { recursive: true });
      if (content !== null) fs.writeFileSync(at, content);
    }
    fs.mkdirSync(root, { recursive: true });
    return root;
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-roots-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('each image with its image.json and rootfs, from any layer; one without either is left out', () => {
    const template = layer('template', { 'opt/mcp-images/mcp_time/image.json': '{}', 'opt/mcp-images/mcp_time/rootfs/bin': null });
    const info = layer('create-info', { 'opt/mcp-images/mcp_git/image.json': '{}' });
    const rootfs = layer('create-layer', { 'opt/mcp-images/mcp_git/rootfs/usr': null });
    const failed = layer('failed', { 'opt/mcp-images/mcp_grafana/error': 'unknown image\n' });
    const half = layer('half', { 'opt/mcp-images/mcp_half/rootfs/x': null });
    expect(mcpImageRoots([info, rootfs, failed, half, template])).toEqual([
      '/opt/mcp-images/mcp_git/rootfs',
      '/opt/mcp-images/mcp_time/rootfs',
    ]);
    expect(mcpImageRoots([layer('plain', { 'etc/passwd': 'root:x:0:0::/root:/bin/sh\n' })])).toEqual([]);
  });

  test("a layer whose /opt is a link is not read through it (the host's directory it names is never listed)", () => {
    const elsewhere = layer('host-dir', { 'mcp-images/mcp_evil/image.json': '{}', 'mcp-images/mcp_evil/rootfs/x': null });
    const hostile = layer('hostile', {});
    fs.symlinkSync(elsewhere, path.join(hostile, 'opt'));
    expect(mcpImageRoots([hostile])).toEqual([]);
  });
});
