/**
 * Waiting for a tag: resolves when a file (or any markdown file under a directory) carries a tag
 * as a real tag (whatever `scanTags` reports). A lifecycle tag (`#done-fix`) counts only on the
 * Tags line and in front matter, where a request's state lives (docs/TAGS.md): a mention in
 * prose, an agent's note or a human's, is no evidence that the item reached that state. Other
 * tags count anywhere. Checks once at the start, then re-checks on file-system events, never on a timer:
 * the file is watched through its directory (so an editor's rename-save is seen), a directory as
 * a tree, both by the daemon's watch layer (WatchedRoots), which also watches again a directory
 * that was removed and re-created; a watch opened again means a re-check.
 * Every path out (found, timeout, error, abort) closes the watch and the scan workers.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { MAX_PARSE_BYTES, readRequestFile } from '../files/read-text-file.js';
import { findTaggedFiles } from '../tags/find-tagged-files.js';
import { ScanPool, ScanTimeoutError } from '../tags/scan-pool.js';
import { lifecycleOf, parseTagPattern } from '../tags/tag-name.js';
import { isMarkdownPath } from '../tags/walk-markdown.js';
import { loadWatchBackend } from './load-watch-backend.js';
import { WatchedRoots } from './watched-roots.js';
import { DEFAULT_WATCHER } from './watch-backend.js';

export type AwaitTarget = { file: string } | { dir: string };

export interface AwaitTagOptions {
  /** A validated tag (`parseTag`). */
  tag: string;
  target: AwaitTarget;
  /** Give up after this many milliseconds; undefined waits forever. */
  timeoutMs?: number;
  /** How the timeout is named in the message (the user's `--timeout` value). */
  timeoutLabel?: string;
  /** A file that cannot be checked right now (not UTF-8, too large, parse time limit). */
  onWarning?: (message: string) => void;
  /** Called once the watch is ready and the tag is still absent (with the watched paths). */
  onWatching?: (watched: string[]) => void;
  signal?: AbortSignal;
}

export interface AwaitTagResult {
  /** The file that carries the tag: the given file, or the directory joined with its path below. */
  path: string;
}

type Check = { found: true } | { found: false; warning?: string };

export async function awaitTag(options: AwaitTagOptions): Promise<AwaitTagResult> {
  const waiter = new TagWaiter(options);
  try {
    return await waiter.run();
  } finally {
    await waiter.close();
  }
}

class TagWaiter {
  private readonly pool = new ScanPool({ size: 1 });
  private readonly needle: string;
  /** A lifecycle tag: only the Tags line and front matter count. */
  private readonly stateOnly: boolean;
  private roots: WatchedRoots | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<string>();
  private draining = false;
  private settled = false;
  private readonly warned = new Set<string>();
  private resolveRun: (result: AwaitTagResult) => void = () => undefined;
  private rejectRun: (error: unknown) => void = () => undefined;
  private readonly abort = (): void => this.fail(new EngineError('Aborted'));

  constructor(private readonly options: AwaitTagOptions) {
    this.needle = options.tag.slice(1);
    this.stateOnly = lifecycleOf(options.tag) !== null;
  }

  run(): Promise<AwaitTagResult> {
    return new Promise<AwaitTagResult>((resolvePromise, rejectPromise) => {
      this.resolveRun = resolvePromise;
      this.rejectRun = rejectPromise;
      if (this.options.signal?.aborted) return this.abort();
      this.options.signal?.addEventListener('abort', this.abort, { once: true });
      const start =
        'file' in this.options.target
          ? this.startFile(this.options.target.file)
          : this.startDir(this.options.target.dir);
      start.catch((error: unknown) => this.fail(error));
    });
  }

  async close(): Promise<void> {
    this.settled = true;
    if (this.timer) clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this.abort);
    const roots = this.roots;
    this.roots = null;
    await Promise.all([roots?.close(), this.pool.close()]);
  }

  private succeed(path: string): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveRun({ path });
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.rejectRun(error);
  }

  /** The time limit runs from the end of the first check: a tag already there always wins. */
  private armTimer(): void {
    if (this.options.timeoutMs === undefined || this.settled) return;
    this.timer = setTimeout(() => this.fail(this.timeoutError()), this.options.timeoutMs);
  }

  private timeoutError(): EngineError {
    const { target, timeoutLabel, timeoutMs, tag } = this.options;
    const seconds = timeoutLabel ?? String((timeoutMs ?? 0) / 1000);
    const where = 'file' in target ? target.file : target.dir;
    return new EngineError(`Timed out after ${seconds} s waiting for '${tag}' in ${where}`);
  }

  // --- one file -------------------------------------------------------------------------------

  private async startFile(file: string): Promise<void> {
    const absolute = resolve(file);
    const dir = dirname(absolute);
    const dirInfo = await stat(dir).catch(() => null);
    if (!dirInfo?.isDirectory()) throw new EngineError(`Directory not found: ${dirname(file)}`);
    const info = await stat(absolute).catch(() => null);
    if (info && !info.isFile()) {
      throw new EngineError(
        info.isDirectory()
          ? `Not a regular file: ${file} (to wait for any file in a directory, use --dir)`
          : `Not a regular file: ${file}`,
      );
    }
    if (await this.checkOne(file, true)) return;
    this.armTimer();
    // A symlinked file is edited at its target, which may live in another directory.
    const real = await realpath(absolute).catch(() => absolute);
    const names = [...new Set([absolute, real])];
    const dirs = [...new Set([dir, dirname(real)])];
    await this.startWatch(names, {
      onChange: () => this.schedule(file),
      onReopened: () => this.schedule(file),
    });
    // Anything written between the first check and the watch being ready is seen here.
    if (!(await this.checkOne(file, true))) this.watching(dirs);
  }

  // --- a directory tree ------------------------------------------------------------------------

  private async startDir(dir: string): Promise<void> {
    const info = await stat(dir).catch(() => null);
    if (!info) throw new EngineError(`Directory not found: ${dir}`);
    if (!info.isDirectory()) throw new EngineError(`Not a directory: ${dir}`);
    if (await this.scanTree(dir)) return;
    this.armTimer();
    await this.startWatch([dir], {
      onChange: (path) => {
        if (isMarkdownPath(path)) this.schedule(path);
      },
      // Changes made while part of the tree was not watched sent no event: look at it all again.
      onReopened: () => {
        void this.scanTree(dir).catch((error: unknown) => this.fail(error));
      },
    });
    if (!(await this.scanTree(dir))) this.watching([dir]);
  }

  private watching(paths: string[]): void {
    if (!this.settled) this.options.onWatching?.(paths);
  }

  private async scanTree(dir: string): Promise<boolean> {
    const { matches, skipped } = await findTaggedFiles({
      paths: [dir],
      pattern: parseTagPattern(this.options.tag),
      tagsOnly: this.stateOnly,
      pool: this.pool,
    });
    for (const s of skipped) this.warnOnce(`skipped ${s.path}: ${s.reason}`);
    const first = matches[0];
    if (first && !this.settled) {
      this.succeed(first.path);
      return true;
    }
    return this.settled;
  }

  // --- watching and checking -------------------------------------------------------------------

  /**
   * Watches `paths` (files through their directory, directories as trees) until the wait ends.
   * A watch that cannot be opened at the start ends the wait; a failure later is a warning, and
   * the watch layer opens the watch again (`onReopened`).
   */
  private async startWatch(
    paths: string[],
    handlers: { onChange: (path: string) => void; onReopened: () => void },
  ): Promise<void> {
    if (this.settled) return;
    const backend = await loadWatchBackend(DEFAULT_WATCHER, (message) => this.warnOnce(message));
    if (this.settled) return;
    let ready = false;
    const roots = new WatchedRoots({
      paths,
      backend,
      onChange: handlers.onChange,
      onError: (error) => {
        if (ready) this.warnOnce(`watching ${paths.join(', ')}: ${error.message}`);
        else this.fail(new EngineError(`Watching ${paths.join(', ')} failed: ${error.message}`));
      },
      onReopened: handlers.onReopened,
    });
    this.roots = roots;
    await roots.start();
    ready = true;
  }

  private schedule(path: string): void {
    if (this.settled) return;
    this.pending.add(path);
    if (!this.draining) void this.drain();
  }

  /** Checks pending paths one at a time; a path written during its check is checked again. */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (!this.settled && this.pending.size > 0) {
        const path = this.pending.values().next().value as string;
        this.pending.delete(path);
        const strict = 'file' in this.options.target;
        await this.checkOne(path, strict);
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.draining = false;
    }
  }

  /**
   * Checks one file; succeeds the wait when it carries the tag. With `strict` (the one awaited
   * file), an unreadable file ends the wait with an error; a missing one does not.
   */
  private async checkOne(path: string, strict: boolean): Promise<boolean> {
    const result = await this.check(path, strict);
    if (this.settled) return true;
    if (result.found) {
      this.succeed(path);
      return true;
    }
    if (result.warning) this.warnOnce(result.warning);
    return false;
  }

  private async check(path: string, strict: boolean): Promise<Check> {
    const read = readRequestFile(path, [this.needle]);
    switch (read.kind) {
      case 'gone':
      case 'no-match':
        return { found: false };
      case 'not-file':
        if (strict) throw new EngineError(`Not a regular file: ${path}`);
        return { found: false };
      case 'too-large':
        return {
          found: false,
          warning: `${path} is larger than ${MAX_PARSE_BYTES} bytes, not parsed`,
        };
      case 'not-text':
        return { found: false, warning: `${path} is not UTF-8 text` };
      case 'error': {
        const reason = read.error.code ?? read.error.message;
        if (reason === 'ENOTDIR') return { found: false };
        if (strict) throw new EngineError(`Cannot read ${path}: ${reason}`, { cause: read.error });
        return { found: false, warning: `cannot read ${path}: ${reason}` };
      }
    }
    try {
      const { occurrences } = await this.pool.scan(read.file.text);
      const found = occurrences.some(
        (o) => o.tag === this.options.tag && (!this.stateOnly || o.place !== 'prose'),
      );
      return { found };
    } catch (error) {
      if (this.settled) return { found: false };
      const reason =
        error instanceof ScanTimeoutError ? error.message : `parse failed: ${String(error)}`;
      return { found: false, warning: `${path}: ${reason}` };
    }
  }

  private warnOnce(message: string): void {
    // After the end, a scan in flight fails on the closed pool: not worth a warning.
    if (this.settled || this.warned.has(message)) return;
    this.warned.add(message);
    this.options.onWarning?.(message);
  }
}
