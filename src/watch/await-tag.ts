/**
 * Waiting for a tag: resolves when a file (or any markdown file under a directory) carries a tag
 * as a real tag, anywhere in the file (Tags line, front matter or prose; whatever `scanTags`
 * reports). Checks once at the start, then re-checks on file-system events from a chokidar watch
 * of the file's directory (so an editor's rename-save is seen), never on a timer.
 * Every path out (found, timeout, error, abort) closes the watcher and the scan workers.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { EngineError, isErrnoException } from '../errors.js';
import { decodeText, MAX_PARSE_BYTES } from '../files/read-text-file.js';
import { findTaggedFiles } from '../tags/find-tagged-files.js';
import { ScanPool, ScanTimeoutError } from '../tags/scan-pool.js';
import { parseTagPattern } from '../tags/tag-name.js';
import { isMarkdownPath } from '../tags/walk-markdown.js';

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

/** Directories the tree walk skips; the watcher skips them too. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

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
  private readonly needle: Buffer;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<string>();
  private draining = false;
  private settled = false;
  private readonly warned = new Set<string>();
  private resolveRun: (result: AwaitTagResult) => void = () => undefined;
  private rejectRun: (error: unknown) => void = () => undefined;
  private readonly abort = (): void => this.fail(new EngineError('Aborted'));

  constructor(private readonly options: AwaitTagOptions) {
    this.needle = Buffer.from(options.tag.slice(1), 'utf8');
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
    const watcher = this.watcher;
    this.watcher = null;
    await Promise.all([watcher?.close(), this.pool.close()]);
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
    const names = new Set([absolute, real]);
    const dirs = [...new Set([dir, dirname(real)])];
    const matches = (path: string): boolean => names.has(resolve(path));
    await this.startWatcher(dirs, {
      depth: 0,
      ignored: (path: string) => !dirs.includes(resolve(path)) && !matches(path),
      onPath: (path) => {
        if (matches(path)) this.schedule(file);
      },
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
    await this.startWatcher([dir], {
      followSymlinks: false,
      ignored: (path: string, stats?: import('node:fs').Stats) => {
        const name = basename(path);
        if (SKIPPED_DIRECTORIES.has(name) || name.endsWith('.engine-lock')) return true;
        return stats?.isFile() === true && !isMarkdownPath(path);
      },
      onPath: (path) => {
        if (isMarkdownPath(path)) this.schedule(path);
      },
      // A file saved in a new directory before its watch is in place sends no event of its own.
      onDir: (path) => {
        void this.scanTree(path).catch((error: unknown) => this.fail(error));
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

  private async startWatcher(
    paths: string[],
    config: {
      depth?: number;
      followSymlinks?: boolean;
      ignored: (path: string, stats?: import('node:fs').Stats) => boolean;
      onPath: (path: string) => void;
      onDir?: (path: string) => void;
    },
  ): Promise<void> {
    if (this.settled) return;
    const watcher = watch(paths, {
      ignoreInitial: true,
      persistent: true,
      depth: config.depth,
      followSymlinks: config.followSymlinks ?? true,
      ignored: config.ignored,
    });
    this.watcher = watcher;
    watcher.on('all', (event, path) => {
      if (event === 'add' || event === 'change') config.onPath(path);
      else if (event === 'addDir') config.onDir?.(path);
    });
    // Raw events are not throttled or filtered by chokidar: a belt to its braces, so a write
    // that chokidar folds into an earlier event is still checked.
    watcher.on('raw', (_event, name, details) => {
      const watched = (details as { watchedPath?: string } | undefined)?.watchedPath;
      if (!watched || !name) return;
      config.onPath(basename(watched) === name ? watched : join(watched, name));
    });
    watcher.on('error', (error) => {
      const message = error instanceof Error ? error.message : String(error);
      this.fail(new EngineError(`Watching ${paths.join(', ')} failed: ${message}`));
    });
    await new Promise<void>((ready) => watcher.once('ready', ready));
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
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      const code = isErrnoException(error) ? error.code : undefined;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { found: false };
      if (code === 'EISDIR') {
        if (strict) throw new EngineError(`Not a regular file: ${path}`);
        return { found: false };
      }
      const reason = code ?? String(error);
      if (strict) throw new EngineError(`Cannot read ${path}: ${reason}`, { cause: error });
      return { found: false, warning: `cannot read ${path}: ${reason}` };
    }
    if (!bytes.includes(this.needle)) return { found: false };
    if (bytes.length > MAX_PARSE_BYTES) {
      return {
        found: false,
        warning: `${path} is larger than ${MAX_PARSE_BYTES} bytes, not parsed`,
      };
    }
    const file = decodeText(bytes);
    if (!file) return { found: false, warning: `${path} is not UTF-8 text` };
    try {
      const { occurrences } = await this.pool.scan(file.text);
      return { found: occurrences.some((o) => o.tag === this.options.tag) };
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
