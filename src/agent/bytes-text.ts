/**
 * Lossless text for file names and paths, which on Linux are bytes, not Unicode.
 *
 * A name that is valid UTF-8 is given as is. Otherwise every byte that is not part of a valid UTF-8 sequence
 * (always 0x80-0xFF) becomes the private-use character U+EF00+byte, i.e. U+EF80..U+EFFF: the raw-octet mapping
 * of MirBSD's OPTU-8. The result is valid Unicode, so strict clients (protobuf-es rejects lone surrogates)
 * accept it. To keep the mapping reversible, a name that really contains one of U+EF80..U+EFFF has that
 * character's three UTF-8 bytes escaped the same way. In a request path, every U+EF80..U+EFFF stands for its
 * byte, so a client that sends back a listed path reaches the same file.
 */
import { isUtf8 } from 'node:buffer';

const ESCAPE_BASE = 0xef00;
const ESCAPED = /[\uef80-\uefff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Bytes -> text: valid UTF-8 decodes normally; stray bytes (and escape-range characters) become U+EF80..U+EFFF. */
export function bytesToText(bytes: Buffer): string {
  if (isUtf8(bytes) && !hasEscapeRangeChar(bytes)) return bytes.toString('utf8');
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const len = utf8SequenceLength(bytes, i);
    const escapeRange = len === 3 && bytes[i] === 0xee && (bytes[i + 1] === 0xbe || bytes[i + 1] === 0xbf);
    if (len > 0 && !escapeRange) {
      out += bytes.toString('utf8', i, i + len);
      i += len;
      continue;
    }
    const n = len > 0 ? len : 1;
    for (let k = 0; k < n; k++) out += String.fromCharCode(ESCAPE_BASE + bytes[i + k]!);
    i += n;
  }
  return out;
}

/** U+EF80..U+EFFF is EE BE 80..BF or EE BF 80..BF in UTF-8. */
function hasEscapeRangeChar(bytes: Buffer): boolean {
  for (let i = bytes.indexOf(0xee); i !== -1 && i + 1 < bytes.length; i = bytes.indexOf(0xee, i + 1)) {
    if (bytes[i + 1] === 0xbe || bytes[i + 1] === 0xbf) return true;
  }
  return false;
}

/** The length of the well-formed UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function utf8SequenceLength(b: Buffer, i: number): number {
  const c0 = b[i]!;
  if (c0 < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c0 >= 0xc2 && c0 <= 0xdf) return cont(1) ? 2 : 0;
  if (c0 === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c0 >= 0xe1 && c0 <= 0xec) || c0 === 0xee || c0 === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c0 === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0; // excludes encoded surrogates
  if (c0 === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c0 >= 0xf1 && c0 <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c0 === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/**
 * Text -> bytes, the inverse of bytesToText: U+EF80..U+EFFF are the bytes 0x80..0xFF. Returns an error text for
 * strings no path can be: a NUL character, or a lone surrogate (not Unicode at all).
 */
export function textToBytes(text: string): Buffer | { error: string } {
  if (text.includes('\0')) return { error: 'contains a NUL character, which no Linux path can hold' };
  if (LONE_SURROGATE.test(text)) return { error: 'contains a lone UTF-16 surrogate, which is not Unicode text' };
  if (!ESCAPED.test(text)) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let run = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c >= 0xef80 && c <= 0xefff) {
      if (run) parts.push(Buffer.from(run, 'utf8'));
      run = '';
      parts.push(Buffer.of(c - ESCAPE_BASE));
    } else {
      run += ch;
    }
  }
  if (run) parts.push(Buffer.from(run, 'utf8'));
  return Buffer.concat(parts);
}
