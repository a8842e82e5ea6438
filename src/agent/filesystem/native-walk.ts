/**
 * The JavaScript side of the native walk (native-walk.c): loads the addon, opens a walk and decodes its batches of
 * records. walk.ts uses it when it loaded and node:fs when not (a build without it, the unit tests on src/); both
 * give the same answers.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getSystemErrorName } from 'node:util';
import type { EntryStat } from './entry-stat';

interface Addon {
  open(root: string, depth: number, batch: number): object | number;
  next(walk: object, into: Buffer): Promise<number>;
  probe(records: Buffer, prefix: string): Promise<Buffer>;
  close(walk: object): void;
  RECORD_WORDS: number;
}

/** The addon's file, beside this module: in dist/src/agent/filesystem, or in the agent's bundle directory (scripts/bundle.ts). */
export const NATIVE_WALK_ADDON = 'native-walk.node';

function loadAddon(): { addon?: Addon; error?: string } {
  const file = path.join(__dirname, NATIVE_WALK_ADDON);
  if (!fs.existsSync(file)) return { error: `${file} not found` };
  const mod = { exports: {} as Addon };
  try {
    process.dlopen(mod, file);
  } catch (err) {
    return { error: `${file}: ${err instanceof Error ? err.message : String(err)}` };
  }
  return { addon: mod.exports };
}

const loaded = loadAddon();

/** Why the native walk is not used (undefined when it is). */
export const nativeWalkUnavailable: string | undefined = loaded.error;

/** Entries per batch: a batch takes a few milliseconds of the pool thread, and as much of the main thread to write. */
const BATCH = 512;

// A record's words (native-walk.c).
const W_LEVEL = 0;
const W_MODE = 1;
const W_UID = 2;
const W_GID = 3;
const W_SIZE_LO = 4;
const W_SIZE_HI = 5;
const W_MTIME_SEC_LO = 6;
const W_MTIME_SEC_HI = 7;
const W_MTIME_NSEC = 8;
const W_FLAGS = 9;
const W_PATH_BYTES = 10;
const W_NAME_AT = 11;
const F_PREFIXED_XATTR = 1;
/** Sizes from 2^53 up have a high word of 2^21 or more. */
const SIZE_HI_UNSAFE = 0x200000;
const TWO_32 = 4294967296;

export interface NativeWalk {
  /**
   * The next batch of records, without their metadata flags, written into `into` (as many as fit, at most BATCH);
   * the part of `into` they fill, empty at the end. One at a time; `into` is the pool thread's until the promise
   * settles, and must be word-aligned (a Buffer of its own is) and long enough for a record of the longest path (the
   * addon's MIN_INTO_BYTES, 4148 bytes; it refuses a shorter one).
   */
  next(into: Buffer): Promise<Buffer>;
  /** The records of a batch with their metadata flags (see forEachRecord); may run beside next(). */
  probe(records: Buffer): Promise<Buffer>;
  /** Frees the walk; a batch still running frees it when it ends. */
  close(): void;
}

/**
 * Opens a walk of `root` (bytes as a latin1 string, binary-path.ts) to `depth` levels, or throws the error of
 * reading `root` as node:fs would (with its `code`). Only when the addon loaded (`nativeWalkUnavailable` undefined).
 */
export function openNativeWalk(root: string, depth: number, xattrPrefix: string, what: string): NativeWalk {
  const addon = loaded.addon!;
  const handle = addon.open(root, depth, BATCH);
  if (typeof handle === 'number') {
    const code = getSystemErrorName(-handle);
    throw Object.assign(new Error(`${code}: ${what}`), { code, errno: -handle });
  }
  return {
    next: async (into) => into.subarray(0, await addon.next(handle, into)),
    probe: (records) => addon.probe(records, xattrPrefix),
    close: () => addon.close(handle),
  };
}

/** Calls `each` for every record of a probed batch: the entry's level (1 for an entry of the root), name and lstat. */
export function forEachRecord(buf: Buffer, each: (level: number, name: string, st: EntryStat) => void): void {
  // A Buffer of its own (offset 0) is aligned for a word view; one that is not is copied.
  const aligned = buf.byteOffset % 4 === 0 ? buf : Buffer.from(buf);
  const w = new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.length >>> 2);
  const words = loaded.addon!.RECORD_WORDS;
  let at = 0;
  while (at < w.length) {
    const pathBytes = w[at + W_PATH_BYTES]!;
    const pathStart = (at + words) * 4;
    const hi = w[at + W_SIZE_HI]!;
    const lo = w[at + W_SIZE_LO]!;
    each(w[at + W_LEVEL]!, aligned.toString('latin1', pathStart + w[at + W_NAME_AT]!, pathStart + pathBytes), {
      mode: w[at + W_MODE]!,
      uid: w[at + W_UID]!,
      gid: w[at + W_GID]!,
      size: hi < SIZE_HI_UNSAFE ? hi * TWO_32 + lo : (BigInt(hi) << 32n) | BigInt(lo),
      mtimeSec: (w[at + W_MTIME_SEC_HI]! | 0) * TWO_32 + w[at + W_MTIME_SEC_LO]!,
      mtimeNsec: w[at + W_MTIME_NSEC]!,
      mayHaveMetadata: (w[at + W_FLAGS]! & F_PREFIXED_XATTR) !== 0,
    });
    at += words + ((pathBytes + 1 + 3) >>> 2);
  }
}
