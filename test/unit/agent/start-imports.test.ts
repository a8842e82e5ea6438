import * as path from 'node:path';
import { build, type Metafile } from 'esbuild';

/**
 * What the agent loads before it listens: every module its entry reaches by static imports (dynamic imports are what
 * server.ts loads on first use), and the node modules those import. A sandbox's create waits for the agent to listen
 * and then makes its first calls (/health, /init, Stat, ListDir), so none of those may need the Connect library or
 * the protobuf runtime, whose descriptors take tens of milliseconds of CPU to build, nor node:crypto (about 12 ms).
 */
const LAZY_CRYPTO = 'src/util/node-crypto.ts';

async function staticImports(entry: string, externals = new Set<string>()): Promise<Set<string>> {
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
    for (const i of inputs[file]?.imports ?? []) {
      if (i.kind === 'dynamic-import') continue;
      // The one require that runs on first use, not at load: src/util/node-crypto.ts.
      if (i.external && !(file === LAZY_CRYPTO && i.kind === 'require-call')) externals.add(i.path);
      else stack.push(i.path);
    }
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

  test('imports node:http but not node:crypto before it listens (the token check needs no hash)', async () => {
    const externals = new Set<string>();
    const loaded = await staticImports('src/agent/main.ts', externals);
    expect(loaded).toContain(LAZY_CRYPTO);
    expect(externals).toContain('node:http');
    expect([...externals].filter((m) => /^(node:)?crypto$/.test(m))).toEqual([]);
  });

  test('the router it loads on first use does bring them (the check above sees dynamic imports apart)', async () => {
    const loaded = [...(await staticImports('src/agent/router.ts'))];
    expect(loaded.some((f) => f.includes('@connectrpc/connect'))).toBe(true);
    expect(loaded).toContain('src/contract/gen/filesystem_pb.ts');
  });
});
