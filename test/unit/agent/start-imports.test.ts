import * as path from 'node:path';
import { build, type Metafile } from 'esbuild';

/**
 * What the agent loads before it listens: every module its entry reaches by static imports (dynamic imports are what
 * server.ts loads on first use). A sandbox's create waits for the agent to listen and then makes its first calls
 * (/health, /init, Stat, ListDir), so none of those may need the Connect library or the protobuf runtime, whose
 * descriptors take tens of milliseconds of CPU to build.
 */
async function staticImports(entry: string): Promise<Set<string>> {
  const root = path.resolve(__dirname, '../../..');
  const result = await build({
    entryPoints: [path.join(root, entry)],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    metafile: true,
    outfile: 'out.js',
    loader: { '.node': 'copy' },
    logLevel: 'silent',
  });
  const inputs: Metafile['inputs'] = result.metafile.inputs;
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of inputs[file]?.imports ?? []) if (i.kind !== 'dynamic-import' && !i.external) stack.push(i.path);
  }
  return seen;
}

describe("the agent's start", () => {
  test('loads neither @connectrpc nor @bufbuild nor generated descriptors before it listens', async () => {
    const loaded = [...(await staticImports('src/agent/main.ts'))];
    expect(loaded).toContain('src/agent/server.ts');
    expect(loaded).toContain('src/agent/filesystem/fast-path.ts');
    expect(loaded.filter((f) => /@connectrpc|@bufbuild|src\/contract\/gen\//.test(f))).toEqual([]);
  });

  test('the router it loads on first use does bring them (the check above sees dynamic imports apart)', async () => {
    const loaded = [...(await staticImports('src/agent/router.ts'))];
    expect(loaded.some((f) => f.includes('@connectrpc/connect'))).toBe(true);
    expect(loaded).toContain('src/contract/gen/filesystem_pb.ts');
  });
});
