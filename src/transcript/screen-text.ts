/**
 * An interactive agent's transcript (the bytes its terminal received) as the text its screen
 * showed: the bytes go through a terminal emulator (@xterm/headless) of the agent's terminal size,
 * and only the cells' text comes out, never an escape sequence. The emulator's answers to the
 * agent's queries (device attributes, cursor position) go nowhere.
 *
 * The text comes out in order, as it settles: a row once it scrolls off the top of the screen into
 * the history; the main screen's rows above the cursor when an alternate screen (a full-screen
 * program) is entered, and that screen as it was when the program left it; and at the end, the
 * screen as it is (the main screen, then the alternate one if still shown).
 * Rows are the terminal's rows: a line longer than the terminal is the rows it wrapped into. A row
 * redrawn in place while on screen is seen only as it was last drawn.
 */
// A CommonJS package: its classes come with its default export.
import xterm, { type IBuffer, type Terminal } from '@xterm/headless';
import { AGENT_TERMINAL } from '../runners/runner.js';

/**
 * The bytes parsed before the rows that settled are taken. Each scroll takes a byte at least, so
 * with this much history no row leaves the history before it is taken.
 */
const PIECE_BYTES = 4096;

/** Alternate screen modes (DECSET 47, 1047, 1049): leaving one discards its text. */
const ALTERNATE_MODES = new Set([47, 1047, 1049]);

export class ScreenText {
  private readonly terminal: Terminal;
  /** Text settled during the current write, in order. */
  private settled: string[] = [];
  /** Rows of the main screen's history already taken during the current write. */
  private historyTaken = 0;
  /**
   * Top rows of the main screen already taken, when an alternate screen was entered: the text
   * before a full-screen program comes out before the program's. They are not taken again when
   * they scroll into the history.
   */
  private screenTaken = 0;

  constructor(size: { cols: number; rows: number } = AGENT_TERMINAL) {
    this.terminal = new xterm.Terminal({
      cols: size.cols,
      rows: size.rows,
      scrollback: PIECE_BYTES,
      // The parser hooks below are a proposed API of xterm.js.
      allowProposedApi: true,
    });
    const parser = this.terminal.parser;
    // Run before the emulator's own handlers (returning false lets them run): take what the
    // sequence is about to discard.
    const alternate = (params: (number | number[])[]): boolean =>
      params.some((p) => typeof p === 'number' && ALTERNATE_MODES.has(p));
    parser.registerCsiHandler({ prefix: '?', final: 'h' }, (params) => {
      if (alternate(params)) this.takeMainAbove();
      return false;
    });
    parser.registerCsiHandler({ prefix: '?', final: 'l' }, (params) => {
      if (alternate(params)) this.takeAlternate();
      return false;
    });
    parser.registerCsiHandler({ final: 'J' }, (params) => {
      // ED 3 erases the history (`clear`); after ED 2, the rows taken from the screen are blank,
      // and what is written there next is new.
      if (params[0] === 3) this.takeHistory(true);
      if (params[0] === 2 && this.terminal.buffer.active.type === 'normal') this.screenTaken = 0;
      return false;
    });
    parser.registerEscHandler({ final: 'c' }, () => {
      // RIS: a full reset leaves the alternate screen and erases the history and the screen.
      this.takeAlternate();
      this.takeHistory(true);
      this.screenTaken = 0;
      return false;
    });
  }

  /** Feeds the next bytes; resolves to the rows that settled (left the screen) meanwhile. */
  write(bytes: Uint8Array): Promise<string[]> {
    const out: string[] = [];
    // Given at once, each piece settled as soon as it is parsed: awaiting each piece would cost
    // the emulator's pause between two writes, each time.
    return new Promise((resolve) => {
      if (bytes.length === 0) resolve(out);
      for (let start = 0; start < bytes.length; start += PIECE_BYTES) {
        const last = start + PIECE_BYTES >= bytes.length;
        this.terminal.write(bytes.subarray(start, start + PIECE_BYTES), () => {
          this.takeHistory();
          out.push(...this.settled);
          this.settled = [];
          this.dropHistory();
          if (last) resolve(out);
        });
      }
    });
  }

  /** What the screen shows now: the main screen, then the alternate one when it is shown. */
  end(): string[] {
    const { normal, active } = this.terminal.buffer;
    const rows = trimTrailingBlanks(rowsOf(normal, normal.baseY + this.screenTaken, normal.length));
    if (active.type === 'alternate') rows.push(...rowsOf(active, 0, active.length));
    return trimTrailingBlanks(rows);
  }

  /** Takes the main screen's history rows not taken yet; all of it when it is being erased. */
  private takeHistory(erased = false): void {
    const normal = this.terminal.buffer.normal;
    const skip = Math.min(this.screenTaken, normal.baseY - this.historyTaken);
    this.screenTaken -= skip;
    this.settled.push(...rowsOf(normal, this.historyTaken + skip, normal.baseY));
    this.historyTaken = erased ? 0 : normal.baseY;
  }

  /** Takes the main screen's rows above the cursor, as an alternate screen is entered. */
  private takeMainAbove(): void {
    const normal = this.terminal.buffer.active;
    if (normal.type !== 'normal') return;
    this.takeHistory();
    const above = normal.cursorY;
    this.settled.push(...rowsOf(normal, normal.baseY + this.screenTaken, normal.baseY + above));
    this.screenTaken = Math.max(this.screenTaken, above);
  }

  /** Takes the alternate screen's text, when it is shown (it is about to be discarded). */
  private takeAlternate(): void {
    const active = this.terminal.buffer.active;
    if (active.type !== 'alternate') return;
    this.takeHistory();
    this.settled.push(...trimTrailingBlanks(rowsOf(active, 0, active.length)));
  }

  /** Forgets the history taken: setting the history's size to 0 empties it. */
  private dropHistory(): void {
    this.terminal.options.scrollback = 0;
    this.terminal.options.scrollback = PIECE_BYTES;
    this.historyTaken = 0;
  }
}

/** Rows `from` to `to` (excluded) of a buffer, trailing spaces trimmed. */
function rowsOf(buffer: IBuffer, from: number, to: number): string[] {
  const rows: string[] = [];
  for (let y = from; y < to; y++) rows.push(buffer.getLine(y)?.translateToString().trimEnd() ?? '');
  return rows;
}

function trimTrailingBlanks(rows: string[]): string[] {
  let end = rows.length;
  while (end > 0 && rows[end - 1] === '') end--;
  return rows.slice(0, end);
}
