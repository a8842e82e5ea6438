/**
 * Splits a byte stream into lines (at `\n`, `\r\n` or a lone `\r`, as a terminal shows progress bars) keeping at most
 * `maxBytes` of each: the rest of a longer line is counted, never buffered, so a line without end costs no memory.
 * A line is cut at a UTF-8 character boundary; `emit` gets the kept text and how many bytes were cut.
 */
export class BoundedLines {
  private parts: Buffer[] = [];
  private kept = 0;
  private cut = 0;
  private afterCR = false;

  constructor(
    private readonly maxBytes: number,
    private readonly emit: (line: string, cutBytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    if (this.afterCR && chunk.length > 0 && chunk[0] === 0x0a) start = 1;
    this.afterCR = false;
    for (let i = start; i < chunk.length; i++) {
      const b = chunk[i];
      if (b !== 0x0a && b !== 0x0d) continue;
      this.take(chunk.subarray(start, i));
      this.flushLine();
      if (b === 0x0d) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === 0x0a) i++;
        } else this.afterCR = true;
      }
      start = i + 1;
    }
    this.take(chunk.subarray(start));
  }

  /** The stream ended: a last line without its end is emitted too. */
  end(): void {
    if (this.kept > 0 || this.cut > 0) this.flushLine();
  }

  private take(piece: Buffer): void {
    const room = this.maxBytes - this.kept;
    if (piece.length <= room) {
      if (piece.length > 0) this.parts.push(Buffer.from(piece));
      this.kept += piece.length;
      return;
    }
    if (room > 0) this.parts.push(Buffer.from(piece.subarray(0, room)));
    this.kept += Math.max(room, 0);
    this.cut += piece.length - Math.max(room, 0);
  }

  private flushLine(): void {
    let line = Buffer.concat(this.parts, this.kept);
    let cut = this.cut;
    if (cut > 0) {
      const end = utf8Boundary(line);
      cut += line.length - end;
      line = line.subarray(0, end);
    }
    this.parts = [];
    this.kept = 0;
    this.cut = 0;
    this.emit(line.toString('utf8'), cut);
  }
}

/** The longest prefix of `buf` that does not end inside a UTF-8 sequence. */
export function utf8Boundary(buf: Buffer): number {
  for (let back = 1; back <= Math.min(4, buf.length); back++) {
    const b = buf[buf.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? buf.length - back : buf.length;
  }
  return buf.length;
}
