/**
 * The transcript tails on the board's cards, each rendered once per state of its agent.log (its
 * size and mtime): an unchanged log is never rendered again. A render takes up to half a second
 * (the log's last MiB through a terminal emulator), so a board waits for it only BUDGET_MS; past
 * that the card shows the tail it had, and the board is told to fetch again once the render is
 * done. A session's log is rendered at most once per MIN_INTERVAL_MS: an agent that writes all
 * the time costs one render per interval, not a render per fetch. A change seen within the
 * interval tells the board to fetch again at its end, so the card does not stay stale until the
 * next change.
 */
import { stat } from 'node:fs/promises';
import { sessionDir } from '../sessions/session-dir.js';

/** How many lines a card shows. */
export const TAIL_LINES = 15;
/** How long a board waits for a render before it shows the tail it had. */
const BUDGET_MS = 250;
const MIN_INTERVAL_MS = 2000;
/** The sessions whose tails are kept (the least recently rendered go first). */
const KEPT = 256;

export interface TailOptions {
  /** The last `lines` lines of a session's transcript, as text (transcript/transcriptTail). */
  render: (dir: string, lines: number) => Promise<string[]>;
  /** A render the board did not wait for is done: the board should be computed again. */
  onLate: () => void;
  /** Tests: other than BUDGET_MS and MIN_INTERVAL_MS. */
  budgetMs?: number;
  minIntervalMs?: number;
}

interface Rendered {
  /** The log's size and mtime the text was rendered from. */
  key: string;
  text: string | null;
  at: number;
}

export class TranscriptTails {
  private readonly rendered = new Map<string, Rendered>();
  private readonly rendering = new Map<string, Promise<string | null>>();
  /** Sessions whose change came within the interval: the board is told at its end. */
  private readonly deferred = new Set<string>();

  constructor(private readonly options: TailOptions) {}

  /** The tail of the session in `dir` as text; null when it has no transcript yet. */
  async tail(dir: string): Promise<string | null> {
    const info = await stat(sessionDir(dir).agentLog).catch(() => null);
    if (info === null) return null;
    const key = `${info.size}:${info.mtimeMs}`;
    const known = this.rendered.get(dir);
    if (known?.key === key) return known.text;
    const wait = known
      ? known.at + (this.options.minIntervalMs ?? MIN_INTERVAL_MS) - Date.now()
      : 0;
    if (known && wait > 0) {
      this.defer(dir, wait);
      return known.text;
    }
    const fresh = this.render(dir, key);
    let late = false;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<string | null>((resolve) => {
      timer = setTimeout(() => {
        late = true;
        resolve(known?.text ?? null);
      }, this.options.budgetMs ?? BUDGET_MS);
    });
    const shown = await Promise.race([fresh, waited]);
    clearTimeout(timer);
    if (late) void fresh.then(() => this.options.onLate());
    return shown;
  }

  private defer(dir: string, ms: number): void {
    if (this.deferred.has(dir)) return;
    this.deferred.add(dir);
    setTimeout(() => {
      this.deferred.delete(dir);
      this.options.onLate();
    }, ms).unref();
  }

  /** One render of `dir` at a time; its text is kept under `key`. */
  private render(dir: string, key: string): Promise<string | null> {
    const running = this.rendering.get(dir);
    if (running) return running;
    const at = Date.now();
    const text = this.options
      .render(dir, TAIL_LINES)
      .then((lines) => (lines.length > 0 ? lines.join('\n') : null))
      .catch(() => null)
      .then((text) => {
        this.rendering.delete(dir);
        this.rendered.delete(dir);
        this.rendered.set(dir, { key, text, at });
        const oldest = this.rendered.keys().next().value;
        if (this.rendered.size > KEPT && oldest !== undefined) this.rendered.delete(oldest);
        return text;
      });
    this.rendering.set(dir, text);
    return text;
  }
}
