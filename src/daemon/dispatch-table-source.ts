/**
 * The §TAG_DISPATCH table in force, kept current while the daemon runs. `directives/TAGS.md` is
 * read again when a watch of its directory reports it changed (once it has been quiet for the
 * debounce period, so a half-written save is not judged) and every check interval in any case
 * (events are hints; the directory may not exist yet, or be re-created). A text seen before, an
 * unchanged re-save included, does nothing. A valid new table replaces the old one, and the
 * daemon is told (it reads again the files whose items had no dispatchable row). An invalid table, or a
 * file that cannot be read (deleted), leaves the old table in force and is logged as an error
 * once, naming `file:line` (see parseDispatchTable).
 */
import { readFile, stat } from 'node:fs/promises';
import {
  parseDispatchTable,
  type DispatchRoute,
  type DispatchTable,
} from '../dispatch/dispatch-table.js';
import { ChangeSignals, type ChangeSubscription } from '../watch/change-signals.js';
import type { DispatchRoutes, LogFn } from './daemon-context.js';

export interface DispatchTableSourceOptions {
  /** `<root>/directives/TAGS.md`; with git claims, the root's counterpart in the checkout's. */
  path: string;
  /** The table in force at start. */
  table: DispatchTable;
  /** The text of `path` it was parsed from; null when `path` could not be read (shipped table). */
  text: string | null;
  /** The modification time of `path` when `text` was read (null: not read). */
  mtimeMs: number | null;
  debounceMs: number;
  checkIntervalMs: number;
  /** false: no watch, the periodic check only (see --no-watch). */
  watch: boolean;
  log: LogFn;
}

/** A read of the file: its text, or the error code it failed with. */
type Reading = { text: string } | { error: string };

export class DispatchTableSource implements DispatchRoutes {
  private readonly options: DispatchTableSourceOptions;
  private table: DispatchTable;
  /** The text the table in force was parsed from. */
  private inForce: string | null;
  /** What the last read found: the same again does nothing. */
  private lastSeen: Reading;
  /** Nouns warned about under the table in force; a new table may warn again. */
  private readonly warned = new Set<string>();
  private readonly signals: ChangeSignals;
  private running: Promise<void> | null = null;
  /** The wait under way; closing it ends the wait (a wait on no file is not woken by signals). */
  private current: ChangeSubscription | null = null;
  /** The watch of this round could not be opened (no directory yet). */
  private watchFailed = false;
  /** The modification time the previous read saw, to tell an unchanged save from no save. */
  private lastMtimeMs: number | null;
  private closed = false;

  constructor(options: DispatchTableSourceOptions) {
    this.options = options;
    this.table = options.table;
    this.inForce = options.text;
    this.lastMtimeMs = options.mtimeMs;
    this.lastSeen = options.text === null ? { error: 'ENOENT' } : { text: options.text };
    this.signals = new ChangeSignals((error) => {
      this.watchFailed = true;
      options.log('debug', `${error.message}; polling`);
    });
  }

  route(noun: string, file: string): DispatchRoute | null {
    const route = this.table.get(noun);
    if (route?.dispatchable) return route;
    if (!this.warned.has(noun)) {
      this.warned.add(noun);
      this.options.log(
        'warn',
        route
          ? `#delegated-${noun} is marked not dispatchable in §TAG_DISPATCH; left untouched`
          : `#delegated-${noun} has no row in §TAG_DISPATCH; left untouched (${file})`,
      );
    }
    return null;
  }

  cap(noun: string): number | undefined {
    return this.table.get(noun)?.max;
  }

  watch(onReload: () => void): void {
    if (this.running || this.closed) return;
    this.running = this.run(onReload);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.signals.close();
    this.current?.close();
    await this.running;
  }

  private async run(onReload: () => void): Promise<void> {
    const { path, watch, checkIntervalMs } = this.options;
    while (!this.closed) {
      // A fresh watch each round, opened before the read: a change after the read wakes the
      // next wait, and a watch that died with its directory is replaced.
      this.watchFailed = false;
      const changes = this.signals.subscribe(watch ? [path] : []);
      this.current = changes;
      try {
        const mtimeMs = await this.quiet((ms) => changes.next(ms));
        if (!this.closed && (await this.check(mtimeMs))) onReload();
        // Like the watch of request paths, a missing watch or file is looked for every second: a
        // watch opened on a directory about to be deleted is not told when it is created again.
        const missing = this.watchFailed || 'error' in this.lastSeen;
        await changes.next(missing ? Math.min(1000, checkIntervalMs) : checkIntervalMs);
      } finally {
        changes.close();
      }
    }
  }

  /**
   * Waits until the file has not been written for the debounce period; returns its modification
   * time (null: no file).
   */
  private async quiet(wait: (ms: number) => Promise<void>): Promise<number | null> {
    const { path, debounceMs } = this.options;
    for (;;) {
      const info = await stat(path).catch(() => null);
      const left = info ? info.mtimeMs + debounceMs - Date.now() : 0;
      // A modification time in the future (clock skew) would never settle: read it now.
      if (left <= 0 || left > debounceMs || this.closed) return info?.mtimeMs ?? null;
      await wait(left);
    }
  }

  /** Reads the file (last modified at `mtimeMs`); true when a new table took effect. */
  private async check(mtimeMs: number | null): Promise<boolean> {
    const { path, log } = this.options;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      if (this.see({ error: code }))
        log('error', `cannot read ${path} (${code}); the §TAG_DISPATCH table in force stays`);
      return false;
    }
    const saved = this.lastMtimeMs !== null && mtimeMs !== this.lastMtimeMs;
    this.lastMtimeMs = mtimeMs;
    if (!this.see({ text })) {
      if (saved) log('debug', `${path} saved unchanged; the §TAG_DISPATCH table in force stays`);
      return false;
    }
    // Back to the table in force after an error was logged: say the error no longer holds.
    if (text === this.inForce) {
      log('info', `${path} holds the §TAG_DISPATCH table in force again`);
      return false;
    }
    let table: DispatchTable;
    try {
      table = parseDispatchTable(text, path);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log('error', `${message}; the §TAG_DISPATCH table in force stays`);
      return false;
    }
    this.table = table;
    this.inForce = text;
    this.warned.clear();
    log('info', `reloaded §TAG_DISPATCH from ${path} (${table.size} rows)`);
    return true;
  }

  /** Records what a read found; false when it is what the previous read found. */
  private see(found: Reading): boolean {
    const last = this.lastSeen;
    if (
      'text' in found
        ? 'text' in last && last.text === found.text
        : 'error' in last && last.error === found.error
    )
      return false;
    this.lastSeen = found;
    return true;
  }
}
