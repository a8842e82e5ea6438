/**
 * ListDir (docs/agent.md, "Wire semantics"): `depth` 0 means 1; depth N lists N levels below the
 * path; entries depth-first pre-order, names sorted bytewise, the listed directory itself not included. A
 * symlink given as the path is followed and entry paths stay under the path as requested; symlinks met in the
 * walk are listed, never descended.
 *
 * Errors on the listed directory itself are the call's error. Below it, the walk keeps going like `find`:
 * a subdirectory the agent may not read is listed but not descended; an entry the agent may not stat, or one
 * that vanished during the walk, is skipped.
 *
 * The walk runs on synchronous filesystem calls in slices of a few milliseconds, yielding to the event loop
 * between slices; the deadline and a client that went away are checked at every yield.
 */
import * as fs from 'node:fs';
import { binaryText, fsPath, isAscii, joinBinary } from './binary-path';
import { bytesToText } from '../bytes-text';
import { entryJson, type EntryContext } from './entry';
import { AgentError, fsError } from '../errors';
import { kindOf } from './file-mode';
import type { JsonChunks } from './json-chunks';
import { Code } from '@connectrpc/connect';

/**
 * The few filesystem calls the walk makes itself, replaceable in tests. Paths and names are bytes held as latin1
 * strings (binary-path.ts): a listing of 100,000 entries then makes no Buffer per name.
 */
export interface WalkFs {
  /** `p` as node:fs takes it: an ASCII string (binary-path.ts), or the bytes. */
  lstat(p: string | Buffer): fs.BigIntStats | undefined;
  readdir(p: string): string[];
}

export const realWalkFs: WalkFs = {
  lstat: (p) => fs.lstatSync(p, { bigint: true, throwIfNoEntry: false }),
  readdir: (p) => fs.readdirSync(fsPath(p), { encoding: 'latin1' }),
};

export interface ListDirLimits {
  maxEntries: number;
  /** Returns why the walk must stop now (deadline passed, client gone), checked between slices. */
  stopReason(): AgentError | undefined;
}

interface Frame {
  dir: string;
  /** `dir` is all ASCII: its entries' paths need no conversion when their names are ASCII too. */
  ascii: boolean;
  /** The JSON text of `dir/` without the closing quote: an entry's path is this and its name's JSON text. */
  pathJsonPrefix: string;
  names: string[];
  next: number;
  level: number;
}

function newFrame(dir: string, names: string[], level: number): Frame {
  const ascii = isAscii(dir);
  const dirJson = JSON.stringify(ascii ? dir : binaryText(dir));
  const pathJsonPrefix = dir === '/' ? '"/' : `${dirJson.slice(0, -1)}/`;
  // One char per byte, so the default (UTF-16 code unit) order of these strings is the bytewise order.
  return { dir, ascii, pathJsonPrefix, names: names.sort(), next: 0, level };
}

const SLICE_MS = 8;

/**
 * Checks that the listed path is (or leads through symlinks to) a directory, and returns it as requested: the walk
 * reads through the link, and entry paths stay under the path the client gave, as a shell's `ls link/` shows them.
 */
export function listRoot(requested: Buffer): Buffer {
  const shown = bytesToText(requested);
  let root: Buffer;
  try {
    root = fs.realpathSync.native(requested, { encoding: 'buffer' });
  } catch (err) {
    throw fsError(err, `ListDir ${shown}`);
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(root);
  } catch (err) {
    throw fsError(err, `ListDir ${shown}`);
  }
  if (!st.isDirectory()) throw new AgentError(Code.InvalidArgument, `ListDir ${shown}: not a directory (use Stat for a single entry)`);
  return requested;
}

/** Walks `root` to `depth` levels, pushing each entry's JSON to `out` (comma-separated); returns the count. */
export async function walk(
  root: Buffer,
  depth: number,
  ctx: EntryContext,
  limits: ListDirLimits,
  out: JsonChunks,
  wfs: WalkFs = realWalkFs,
): Promise<number> {
  const rootBin = root.toString('latin1');
  let names: string[];
  try {
    names = wfs.readdir(rootBin);
  } catch (err) {
    throw fsError(err, `ListDir ${binaryText(rootBin)}`);
  }
  const stack: Frame[] = [newFrame(rootBin, names, 1)];
  let count = 0;
  let sliceStart = Date.now();
  let sinceCheck = 0;

  while (stack.length > 0) {
    if (++sinceCheck >= 64) {
      sinceCheck = 0;
      if (Date.now() - sliceStart >= SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        const stop = limits.stopReason();
        if (stop) throw stop;
        sliceStart = Date.now();
      }
    }
    const frame = stack[stack.length - 1]!;
    if (frame.next >= frame.names.length) {
      stack.pop();
      continue;
    }
    const name = frame.names[frame.next++]!;
    const p = joinBinary(frame.dir, name);
    const ascii = frame.ascii && isAscii(name);
    let st: fs.BigIntStats | undefined;
    try {
      st = wfs.lstat(ascii ? p : Buffer.from(p, 'latin1'));
    } catch {
      st = undefined; // EACCES on a directory we may read but not search: skipped
    }
    if (!st) continue; // vanished since readdir

    if (++count > limits.maxEntries) {
      throw new AgentError(
        Code.ResourceExhausted,
        `ListDir ${binaryText(rootBin)} at depth ${depth} has more than ${limits.maxEntries} entries (the agent's --max-entries); list a smaller depth or a subdirectory`,
      );
    }
    const nameJson = JSON.stringify(ascii ? name : binaryText(name));
    const json = entryJson(p, ascii, nameJson, frame.pathJsonPrefix + nameJson.slice(1), st, ctx);
    out.push(count === 1 ? json : `,${json}`);

    if (frame.level < depth && kindOf(Number(st.mode)) === 'dir') {
      let children: string[] | undefined;
      try {
        children = wfs.readdir(p);
      } catch {
        children = undefined; // unreadable, vanished or replaced: listed, not descended
      }
      if (children && children.length > 0) stack.push(newFrame(p, children, frame.level + 1));
    }
  }
  return count;
}
