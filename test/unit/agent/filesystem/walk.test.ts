/** The walk's order, limits and tolerance of a tree that changes under it, on a fake filesystem. */
import * as fs from 'node:fs';
import { Accounts } from '../../../../src/agent/accounts';
import { AgentError } from '../../../../src/agent/errors';
import { describeEntry } from '../../../../src/agent/filesystem/entry';
import { entryStatOf } from '../../../../src/agent/filesystem/entry-stat';
import { JsonChunks } from '../../../../src/agent/filesystem/json-chunks';
import { walk, type WalkFs } from '../../../../src/agent/filesystem/walk';
import { Code } from '@connectrpc/connect';

type Node = { dir: Record<string, Node> } | { file: true };

function fakeFs(tree: Record<string, Node>, opts: { vanish?: string[]; unreadable?: string[] } = {}): WalkFs {
  const real = fs.lstatSync('/', { bigint: true });
  const find = (p: string): Node | undefined => {
    let node: Node | undefined = { dir: tree };
    for (const part of p.split('/').filter(Boolean)) node = node && 'dir' in node ? node.dir[part] : undefined;
    return node;
  };
  return {
    lstat: (p) => {
      if (opts.vanish?.includes(p)) return undefined;
      const node = find(p);
      if (!node) return undefined;
      return { ...entryStatOf(real), mode: 'dir' in node ? 0o040755 : 0o100644, size: 0 };
    },
    readdir: (p) => {
      const s = p.toString();
      if (opts.unreadable?.includes(s)) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
      const node = find(s);
      if (!node || !('dir' in node)) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      return Object.keys(node.dir);
    },
  };
}

const ctx = { accounts: new Accounts(), xattrPrefix: 'user.svc.' };
const limits = (maxEntries = 1000, stop?: () => AgentError | undefined) => ({ maxEntries, stopReason: stop ?? (() => undefined) });

async function paths(wfs: WalkFs, depth: number, root = '/r'): Promise<string[]> {
  const out = new JsonChunks();
  out.push('[');
  await walk(Buffer.from(root), depth, ctx, limits(), out, wfs);
  out.push(']');
  const chunks: Buffer[] = [];
  const sink = { write: (b: Buffer) => (chunks.push(b), true), end: () => undefined, destroyed: false } as never;
  await out.writeTo(sink);
  return JSON.parse(Buffer.concat(chunks).toString()).map((e: { path: string }) => e.path);
}

const tree: Record<string, Node> = {
  r: { dir: { b: { dir: { y: { file: true }, x: { dir: { deep: { file: true } } } } }, B: { file: true }, a: { file: true } } },
};

test('pre-order, bytewise, depth-limited', async () => {
  expect(await paths(fakeFs(tree), 1)).toEqual(['/r/B', '/r/a', '/r/b']);
  expect(await paths(fakeFs(tree), 2)).toEqual(['/r/B', '/r/a', '/r/b', '/r/b/x', '/r/b/y']);
  expect(await paths(fakeFs(tree), 3)).toEqual(['/r/B', '/r/a', '/r/b', '/r/b/x', '/r/b/x/deep', '/r/b/y']);
});

test('entries that vanish during the walk are skipped; unreadable subdirectories are listed, not descended', async () => {
  expect(await paths(fakeFs(tree, { vanish: ['/r/a', '/r/b/x'] }), 3)).toEqual(['/r/B', '/r/b', '/r/b/y']);
  expect(await paths(fakeFs(tree, { unreadable: ['/r/b'] }), 3)).toEqual(['/r/B', '/r/a', '/r/b']);
});

test('an unreadable root is permission_denied; a vanished root not_found', async () => {
  await expect(walk(Buffer.from('/r'), 1, ctx, limits(), new JsonChunks(), fakeFs(tree, { unreadable: ['/r'] }))).rejects.toMatchObject({
    code: Code.PermissionDenied,
  });
  await expect(walk(Buffer.from('/gone'), 1, ctx, limits(), new JsonChunks(), fakeFs(tree))).rejects.toMatchObject({ code: Code.NotFound });
});

test('the entry limit stops the walk with resource_exhausted', async () => {
  await expect(walk(Buffer.from('/r'), 3, ctx, limits(4), new JsonChunks(), fakeFs(tree))).rejects.toMatchObject({
    code: Code.ResourceExhausted,
  });
});

test('a stop reason (deadline, client gone) ends a long walk at the next slice', async () => {
  const wide: Record<string, Node> = { r: { dir: {} } };
  const dir = (wide.r as { dir: Record<string, Node> }).dir;
  for (let i = 0; i < 20000; i++) dir[`f${i}`] = { file: true };
  const stop = () => new AgentError(Code.DeadlineExceeded, 'late');
  await expect(walk(Buffer.from('/r'), 1, ctx, limits(100000, stop), new JsonChunks(), fakeFs(wide))).rejects.toMatchObject({
    code: Code.DeadlineExceeded,
  });
});

test('size: a JSON number up to 2^53-1, a decimal string above', () => {
  const real = fs.lstatSync('/', { bigint: true });
  const withSize = (size: bigint) =>
    JSON.parse(
      describeEntry(
        Buffer.from('/nonexistent/x'),
        Buffer.from('x'),
        Object.assign(Object.create(Object.getPrototypeOf(real)), real, { mode: 0o100644n, size }),
        ctx,
      ),
    );
  expect(withSize(9007199254740991n).size).toBe(9007199254740991);
  expect(withSize(9007199254740992n).size).toBe('9007199254740992');
  expect(withSize(9223372036854775807n).size).toBe('9223372036854775807');
  expect(withSize(0n).size).toBe(0);
});
