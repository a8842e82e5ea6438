/**
 * The E2B SDK's files hash of a COPY step, recomputed from the archive it uploaded. The SDK hashes, with sha256:
 * `COPY <src> <dest>`, then for every matched path in sorted order its relative path, its `stat` mode and size (in
 * decimal) and its contents (a file's bytes; a symlink's target). The archive it uploads holds the same paths in the
 * same order, with the same modes, sizes and bytes, so the hash can be recomputed from it, except for two things the
 * archive does not carry: a directory's size (`st_size`, which depends on the client's file system) and a hard
 * link's bytes (the archive stores them once, under the first name). An upload holding a directory or a hard link
 * cannot be checked against its hash; it is checked against the sha256 recorded when it arrived (files.ts).
 */
import { createHash, type Hash } from 'node:crypto';
import type { CheckedEntry } from './upload-rules';

const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

export type FilesHashResult = { verifiable: true; hash: string } | { verifiable: false; why: string };

/** Why an archive cannot give this entry's part of the files hash, or undefined when it can. */
export function notHashable(e: CheckedEntry): string | undefined {
  if (e.kind === 'directory') return 'it holds directories, whose sizes the archive does not carry';
  if (e.kind === 'hardlink') return 'it holds hard links, whose bytes the archive stores under another name';
  return undefined;
}

/** Feed it the checked entries of an upload and their data, in archive order; `result` says what it came to. */
export class FilesHasher {
  private readonly hash: Hash;
  private unverifiable: string | undefined;

  constructor(src: string, dest: string) {
    this.hash = createHash('sha256').update(`COPY ${src} ${dest}`);
  }

  entry(e: CheckedEntry): void {
    if (this.unverifiable) return;
    this.unverifiable = notHashable(e);
    if (this.unverifiable) return;
    this.hash.update(e.path);
    if (e.kind === 'symlink') {
      this.hash.update(String(S_IFLNK | e.mode));
      this.hash.update(String(Buffer.byteLength(e.target)));
      this.hash.update(e.target);
      return;
    }
    this.hash.update(String(S_IFREG | e.mode));
    this.hash.update(String(e.size));
  }

  data(chunk: Buffer): void {
    if (!this.unverifiable) this.hash.update(chunk);
  }

  result(): FilesHashResult {
    return this.unverifiable ? { verifiable: false, why: this.unverifiable } : { verifiable: true, hash: this.hash.digest('hex') };
  }
}
