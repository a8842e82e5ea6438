/**
 * One EntryInfo, written straight to JSON text: all fields in a fixed order, `symlinkTarget` only for
 * symlinks. Semantics (docs/agent.md, "Wire semantics"):
 * - `type`: FILE / DIRECTORY; a symlink has its target's type, a broken or looping one UNSPECIFIED; other kinds
 *   (FIFO, socket, device) UNSPECIFIED.
 * - `symlinkTarget`: the fully resolved absolute path; for a link that does not resolve (dangling, loop), its
 *   target text made absolute against the link's directory.
 * - `size`: the entry's own st_size (a symlink's is its target text length); a JSON number up to 2^53-1, a
 *   decimal string above.
 * - `mode`: permission bits (& 0o777); for a symlink its target's, 0 when it does not resolve.
 * - `permissions`: Go FileMode.String() of the entry itself (`Lrwxrwxrwx` for a symlink).
 * - `owner` / `group`: names, the numeric id as text when unknown.
 * - `modifiedTime`: RFC 3339 UTC with nanoseconds as the filesystem keeps them.
 */
import * as fs from 'node:fs';
import type { Accounts } from '../accounts';
import { binaryText, isAscii } from './binary-path';
import { type EntryStat, entryStatOf } from './entry-stat';
import { goModeString, kindOf } from './file-mode';
import { readMetadata } from './metadata';
import { lexicalTarget } from '../paths';
import { formatTimestamp } from './timestamp';

export interface EntryContext {
  accounts: Accounts;
  /** `user.<brand lower>.` */
  xattrPrefix: string;
}

const TYPE_JSON = { file: '"FILE_TYPE_FILE"', dir: '"FILE_TYPE_DIRECTORY"', none: '"FILE_TYPE_UNSPECIFIED"' } as const;

type EntryType = keyof typeof TYPE_JSON;

/** Builds the entry for `p` from its lstat result, as JSON text. Never throws for a vanished symlink target or xattrs. */
export function describeEntry(p: Buffer, name: Buffer, st: fs.BigIntStats, ctx: EntryContext): string {
  return describeBinaryEntry(p.toString('latin1'), name.toString('latin1'), st, ctx);
}

/** describeEntry for byte paths held as latin1 strings (binary-path.ts). */
export function describeBinaryEntry(p: string, name: string, st: fs.BigIntStats, ctx: EntryContext): string {
  const ascii = isAscii(p);
  const nameJson = JSON.stringify(ascii ? name : binaryText(name));
  return entryJson(p, ascii, nameJson, JSON.stringify(ascii ? p : binaryText(p)), entryStatOf(st), ctx);
}

/** Small caches of texts a listing repeats on almost every entry; bounded, a listing meets few distinct values. */
const modeTexts = new Map<number, string>();
const ownerTexts = new Map<string, string>();

function modeText(mode: number): string {
  let text = modeTexts.get(mode);
  if (text === undefined) {
    text = goModeString(mode);
    if (modeTexts.size < 4096) modeTexts.set(mode, text);
  }
  return text;
}

/** An owner or group name as a JSON string. */
function ownerJson(name: string): string {
  let text = ownerTexts.get(name);
  if (text === undefined) {
    text = JSON.stringify(name);
    if (ownerTexts.size < 4096) ownerTexts.set(name, text);
  }
  return text;
}

/**
 * The entry's JSON from what the walk already has: the byte path `p` (a latin1 string), whether it is all ASCII
 * (then it is its own text and needs no conversion for the filesystem), the JSON texts of its name and path, and its
 * lstat fields.
 */
export function entryJson(p: string, ascii: boolean, nameJson: string, pathJson: string, st: EntryStat, ctx: EntryContext): string {
  const mode = st.mode;
  const kind = kindOf(mode);
  let type: EntryType = kind === 'file' ? 'file' : kind === 'dir' ? 'dir' : 'none';
  let perm = mode & 0o777;
  let symlinkTarget: string | undefined;
  const link = ascii ? p : Buffer.from(p, 'latin1');
  let metadataPath: string | Buffer | undefined = st.mayHaveMetadata ? link : undefined;

  if (kind === 'symlink') {
    try {
      const resolved = fs.realpathSync.native(link, { encoding: 'buffer' });
      symlinkTarget = resolved.toString('latin1');
      const target = fs.statSync(resolved, { bigint: true });
      const targetKind = kindOf(Number(target.mode));
      type = targetKind === 'file' ? 'file' : targetKind === 'dir' ? 'dir' : 'none';
      perm = Number(target.mode) & 0o777;
      metadataPath = resolved;
    } catch {
      type = 'none';
      perm = 0;
      metadataPath = undefined;
      try {
        symlinkTarget = lexicalTarget(Buffer.from(p, 'latin1'), fs.readlinkSync(link, { encoding: 'buffer' })).toString('latin1');
      } catch {
        symlinkTarget = p; // vanished between lstat and readlink
      }
    }
  }

  let json =
    `{"name":${nameJson},"type":${TYPE_JSON[type]},"path":${pathJson}` +
    `,"size":${typeof st.size === 'number' ? st.size : `"${st.size}"`},"mode":${perm},"permissions":"${modeText(mode)}"` +
    `,"owner":${ownerJson(ctx.accounts.userName(st.uid))},"group":${ownerJson(ctx.accounts.groupName(st.gid))}` +
    `,"modifiedTime":"${formatTimestamp(st.mtimeSec, st.mtimeNsec)}"`;
  if (symlinkTarget !== undefined) json += `,"symlinkTarget":${JSON.stringify(binaryText(symlinkTarget))}`;
  const metadata = metadataPath !== undefined ? readMetadata(metadataPath, ctx.xattrPrefix) : undefined;
  if (metadata === undefined || metadata.length === 0) return `${json},"metadata":{}}`;
  return `${json},"metadata":{${metadata.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}}`;
}
