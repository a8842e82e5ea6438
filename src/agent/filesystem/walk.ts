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
 * Two walks give the same answers. The native walk (native-walk.c) reads and stats a batch of entries at a time on a
 * libuv pool thread while this thread writes the JSON of the batch before; it is used when its addon loaded. The
 * other runs on synchronous node:fs calls in slices of a few milliseconds, yielding to the event loop between
 * slices. The deadline and a client that went away are checked at every batch or yield.
 */
import * as fs from 'node:fs';
import { binaryText, fsPath, isAscii, joinBinary } from './binary-path';
import { bytesToText } from '../bytes-text';
import { entryJson, type EntryContext } from './entry';
import { type EntryStat, entryStatOf } from './entry-stat';
import { AgentError, fsError } from '../errors';
import { kindOf } from './file-mode';
import type { JsonChunks } from './json-chunks';
import { forEachRecord, nativeWalkUnavailable, openNativeWalk } from './native-walk';
import { Code } from '../../contract/connect-codes';

/**
 * The few filesystem calls the node:fs walk makes, replaceable in tests. Paths and names are bytes held as latin1
 * strings (binary-path.ts): a listing of 100,000 entries then makes no Buffer per name.
 */
export interface WalkFs {
  /** The entry's lstat, undefined when it cannot be stat'd (vanished). May throw (not searchable): skipped too. */
  lstat(p: string): EntryStat | undefined;
  readdir(p: string): string[];
}

export const nodeWalkFs: WalkFs = {
  lstat: (p) => {
    const st = fs.lstatSync(fsPath(p), { bigint: true, throwIfNoEntry: false });
    return st && entryStatOf(st);
  },
  readdir: (p) => fs.readdirSync(fsPath(p), { encoding: 'latin1' }),
};

export interface ListDirLimits {
  maxEntries: number;
  /** Returns why the walk must stop now (deadline passed, client gone), checked between slices. */
  stopReason(): AgentError | undefined;
}

/** A directory whose entries are being listed. */
interface Dir {
  dir: string;
  /** `dir` is all ASCII: its entries' paths need no conversion when their names are ASCII too. */
  ascii: boolean;
  /** The JSON text of `dir/` without the closing quote: an entry's path is this and its name's JSON text. */
  pathJsonPrefix: string;
}

function dirOf(dir: string): Dir {
  const ascii = isAscii(dir);
  const dirJson = JSON.stringify(ascii ? dir : binaryText(dir));
  return { dir, ascii, pathJsonPrefix: dir === '/' ? '"/' : `${dirJson.slice(0, -1)}/` };
}

interface Frame extends Dir {
  names: string[];
  next: number;
  level: number;
}

function newFrame(dir: string, names: string[], level: number): Frame {
  // One char per byte, so the default (UTF-16 code unit) order of these strings is the bytewise order.
  return { ...dirOf(dir), names: names.sort(), next: 0, level };
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

/** Writes the entries of one listing: the count against --max-entries, and each entry's JSON. */
class Listing {
  count = 0;
  constructor(
    private readonly rootBin: string,
    private readonly depth: number,
    private readonly ctx: EntryContext,
    private readonly limits: ListDirLimits,
    private readonly out: JsonChunks,
  ) {}

  /** Adds the entry `name` of `dir`; returns its path. */
  add(dir: Dir, name: string, st: EntryStat): string {
    if (++this.count > this.limits.maxEntries) {
      throw new AgentError(
        Code.ResourceExhausted,
        `ListDir ${binaryText(this.rootBin)} at depth ${this.depth} has more than ${this.limits.maxEntries} entries (the agent's --max-entries); list a smaller depth or a subdirectory`,
      );
    }
    const p = joinBinary(dir.dir, name);
    const ascii = dir.ascii && isAscii(name);
    const nameJson = JSON.stringify(ascii ? name : binaryText(name));
    const json = entryJson(p, ascii, nameJson, dir.pathJsonPrefix + nameJson.slice(1), st, this.ctx);
    this.out.push(this.count === 1 ? json : `,${json}`);
    return p;
  }
}

/**
 * Walks `root` to `depth` levels, pushing each entry's JSON to `out` (comma-separated); returns the count. With `wfs`
 * (tests) or without the addon, through node:fs; else natively.
 */
export async function walk(
  root: Buffer,
  depth: number,
  ctx: EntryContext,
  limits: ListDirLimits,
  out: JsonChunks,
  wfs?: WalkFs,
): Promise<number> {
  const rootBin = root.toString('latin1');
  const listing = new Listing(rootBin, depth, ctx, limits, out);
  if (wfs === undefined && nativeWalkUnavailable === undefined) await walkNative(rootBin, depth, ctx, limits, listing, out);
  else await walkNodeFs(rootBin, depth, limits, listing, wfs ?? nodeWalkFs);
  return listing.count;
}

async function walkNative(
  rootBin: string,
  depth: number,
  ctx: EntryContext,
  limits: ListDirLimits,
  listing: Listing,
  out: JsonChunks,
): Promise<void> {
  let native: ReturnType<typeof openNativeWalk>;
  try {
    native = openNativeWalk(rootBin, depth, ctx.xattrPrefix, `scandir '${binaryText(rootBin)}'`);
  } catch (err) {
    throw fsError(err, `ListDir ${binaryText(rootBin)}`);
  }
  // dirs[l - 1]: the directory whose entries are at level l now (pre-order: the last directory listed at level l - 1).
  const dirs: Dir[] = [dirOf(rootBin)];
  const each = (level: number, name: string, st: EntryStat) => {
    const p = listing.add(dirs[level - 1]!, name, st);
    if (level < depth && kindOf(st.mode) === 'dir') dirs[level] = dirOf(p);
  };
  // Three stages: the pool reads batch k + 2 and probes the attribute lists of batch k + 1 while this thread writes batch k.
  // Each batch is written into a buffer borrowed through the answer (json-chunks.ts) and given back once its JSON is
  // written. `settled` holds every borrowed buffer not given back, with the end of the last native call on it: when
  // the walk stops early, each goes back once the pool thread is done with it.
  const settled = new Map<Buffer, Promise<void>>();
  const track = <T>(buf: Buffer, call: Promise<T>): Promise<T> => {
    settled.set(
      buf,
      call.then(
        () => undefined,
        () => undefined,
      ),
    );
    return call;
  };
  const giveBack = (buf: Buffer) => {
    settled.delete(buf);
    out.giveBack(buf);
  };
  try {
    let walkingBuf = out.borrow();
    let walking = track(walkingBuf, native.next(walkingBuf));
    let probe: { buf: Buffer; records: Promise<Buffer> } | undefined;
    for (;;) {
      const walked = await walking;
      const before = probe;
      if (walked.length === 0) {
        probe = undefined;
        giveBack(walkingBuf);
      } else {
        probe = { buf: walkingBuf, records: track(walkingBuf, native.probe(walked)) };
        walkingBuf = out.borrow();
        walking = track(walkingBuf, native.next(walkingBuf));
      }
      if (before !== undefined) {
        const batch = await before.records;
        const stop = limits.stopReason();
        if (stop) throw stop;
        forEachRecord(batch, each);
        giveBack(before.buf);
      }
      if (walked.length === 0) return;
    }
  } finally {
    for (const [buf, done] of settled) void done.then(() => out.giveBack(buf));
    native.close();
  }
}

async function walkNodeFs(rootBin: string, depth: number, limits: ListDirLimits, listing: Listing, wfs: WalkFs): Promise<void> {
  let names: string[];
  try {
    names = wfs.readdir(rootBin);
  } catch (err) {
    throw fsError(err, `ListDir ${binaryText(rootBin)}`);
  }
  const stack: Frame[] = [newFrame(rootBin, names, 1)];
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
    let st: EntryStat | undefined;
    try {
      st = wfs.lstat(joinBinary(frame.dir, name));
    } catch {
      st = undefined; // EACCES on a directory we may read but not search: skipped
    }
    if (!st) continue; // vanished since readdir
    const p = listing.add(frame, name, st);

    if (frame.level < depth && kindOf(st.mode) === 'dir') {
      let children: string[] | undefined;
      try {
        children = wfs.readdir(p);
      } catch {
        children = undefined; // unreadable, vanished or replaced: listed, not descended
      }
      if (children && children.length > 0) stack.push(newFrame(p, children, frame.level + 1));
    }
  }
}
