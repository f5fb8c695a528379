/** Maps source offsets to 1-based lines and columns, and lines to their spans. */
export class LineIndex {
  private readonly starts: number[] = [0];
  private readonly text: string;

  constructor(text: string) {
    this.text = text;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1))
      this.starts.push(i + 1);
  }

  /** Number of lines; a final line ending does not start a new line. */
  get count(): number {
    const last = this.starts[this.starts.length - 1] as number;
    return last === this.text.length && this.starts.length > 1
      ? this.starts.length - 1
      : this.starts.length;
  }

  lineOf(offset: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.starts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  }

  position(offset: number): { line: number; column: number } {
    const line = this.lineOf(offset);
    return { line, column: offset - (this.starts[line - 1] as number) + 1 };
  }

  /** The content of a line without its line ending (`\n` or `\r\n`). */
  span(line: number): { line: number; start: number; end: number } {
    const start = this.starts[line - 1] as number;
    const next = this.starts[line];
    let end = next === undefined ? this.text.length : next - 1;
    if (end > start && this.text[end - 1] === '\r') end--;
    return { line, start, end };
  }

  /** The offset just past the line ending of the line holding `offset` (or the text's end). */
  endOfLineAt(offset: number): number {
    const next = this.starts[this.lineOf(Math.max(0, offset - 1))];
    return next ?? this.text.length;
  }

  lineText(line: number): string {
    const { start, end } = this.span(line);
    return this.text.slice(start, end);
  }
}
