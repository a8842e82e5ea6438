/**
 * The cached shifted copy of a root-owned layer (runtime/id-shift.ts) is made once per layer: reading the layer with
 * a tool that touches its directories' times (umoci insert, as the lab's images and the image tests do with the
 * base root file system) does not make another whole copy, while a layer made again in its place does.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { shiftedCopyPath, shiftedLayer, type IdMapping } from '../../../src/runtime/id-shift';

const M: IdMapping = { base: 100_000, size: 65_536 };

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-shifted-copy-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A small root-owned layer: a few directories and files. */
function makeLayer(at: string, marker: string): void {
  fs.mkdirSync(path.join(at, 'etc', 'deep'), { recursive: true });
  fs.mkdirSync(path.join(at, 'usr', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(at, 'etc', 'deep', 'file'), marker);
  fs.writeFileSync(path.join(at, 'usr', 'bin', 'tool'), '#!/bin/sh\n', { mode: 0o755 });
}

/** Reads the layer into a new OCI image with umoci, as src/lab/oci-images.ts does. */
function umociInsert(layer: string): void {
  const layout = path.join(dir, 'layout');
  const run = (...args: string[]) => execFileSync('umoci', args, { stdio: 'pipe' });
  if (!fs.existsSync(layout)) {
    run('init', '--layout', layout);
    run('new', '--image', `${layout}:empty`);
  }
  run('insert', '--no-history', '--image', `${layout}:empty`, '--tag', 'app', layer, '/');
}

const copiesBeside = (layer: string) =>
  fs.readdirSync(path.dirname(layer)).filter((n) => n.startsWith(`${path.basename(layer)}.ids-`) && !n.endsWith('.lock'));

describe('the shifted copy of a layer', () => {
  it("is the same after umoci reads the layer (which moves its directories' change times)", async () => {
    const layer = path.join(dir, 'base');
    makeLayer(layer, 'one');
    const first = await shiftedLayer(layer, M);
    expect(fs.statSync(path.join(first, 'etc', 'deep', 'file')).uid).toBe(M.base);
    const changedBefore = fs.statSync(path.join(layer, 'etc')).ctimeMs;
    await new Promise((r) => setTimeout(r, 20));
    umociInsert(layer);
    // The tool did move them: the old key, which named the change time, would have asked for a new copy here.
    expect(fs.statSync(path.join(layer, 'etc')).ctimeMs).toBeGreaterThan(changedBefore);
    expect(shiftedCopyPath(layer, M)).toBe(first);
    expect(await shiftedLayer(layer, M)).toBe(first);
    expect(copiesBeside(layer)).toEqual([path.basename(first)]);
  });

  it('is made again for a layer made again in its place, with the new content', async () => {
    const layer = path.join(dir, 'base');
    makeLayer(layer, 'one');
    const first = await shiftedLayer(layer, M);
    const next = path.join(dir, 'base.new');
    makeLayer(next, 'two');
    fs.rmSync(layer, { recursive: true });
    fs.renameSync(next, layer);
    const second = await shiftedLayer(layer, M);
    expect(second).not.toBe(first);
    expect(fs.readFileSync(path.join(second, 'etc', 'deep', 'file'), 'utf8')).toBe('two');
  });
});
