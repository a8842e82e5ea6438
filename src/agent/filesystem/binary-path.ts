/**
 * Byte paths held as latin1 strings ("binary strings": one char per byte, lossless for any name) on the ListDir
 * path, where a Buffer per name would cost an allocation and a copy for every entry. Most names are ASCII, and an
 * ASCII binary string is the same text in every encoding: it is given to the filesystem and written to JSON as is;
 * only a name with a byte above 0x7F is turned back into bytes.
 */
import { bytesToText } from '../bytes-text';

const NON_ASCII = /[\u0080-\uffff]/;

/** A path node:fs accepts for these bytes (a string is encoded as UTF-8, so only an ASCII one stands for itself). */
export function fsPath(bin: string): string | Buffer {
  return NON_ASCII.test(bin) ? Buffer.from(bin, 'latin1') : bin;
}

/** Whether these bytes are all ASCII: then the string is its own text, its own UTF-8 and its own fs path. */
export function isAscii(bin: string): boolean {
  return !NON_ASCII.test(bin);
}

/** The text a client sees for these bytes (see bytes-text.ts). */
export function binaryText(bin: string): string {
  return NON_ASCII.test(bin) ? bytesToText(Buffer.from(bin, 'latin1')) : bin;
}

/** `dir/name`, without doubling the slash of `/`. */
export function joinBinary(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}
