/** The last `limit` bytes of a stream's text: what a failed server said last, without holding all it ever said. */
export class Tail {
  private text = '';
  constructor(private readonly limit = 4096) {}

  push(chunk: Buffer | string): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit * 2) this.text = this.text.slice(-this.limit);
  }

  toString(): string {
    return this.text.length > this.limit ? `...${this.text.slice(-this.limit)}` : this.text;
  }

  clear(): void {
    this.text = '';
  }
}
