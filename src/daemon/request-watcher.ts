/**
 * Notices request files that changed. chokidar events are hints: inotify drops events under
 * bursts without telling anyone, so a reconcile pass (stat every markdown file, compare size and
 * mtime with the last pass) runs periodically and after every burst. Each changed file is
 * handed on only after it has been quiet for the debounce period.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { isMarkdownPath, walkMarkdownFiles } from '../tags/walk-markdown.js';

export interface RequestWatcherOptions {
  paths: string[];
  debounceMs: number;
  rescanIntervalMs: number;
  /** Called once per settled file (quiet for debounceMs), with the path as discovered. */
  onSettled: (path: string) => void;
  onError: (error: Error) => void;
  /** Events within one debounce window that count as a burst and trigger a reconcile. */
  burstSize?: number;
  /** false: no file watch at all, reconcile passes only (network filesystems without inotify). */
  watch?: boolean;
}

interface Seen {
  size: bigint;
  mtimeNs: bigint;
}

export class RequestWatcher {
  private readonly options: RequestWatcherOptions;
  private watcher: FSWatcher | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly seen = new Map<string, Seen>();
  private rescanTimer: NodeJS.Timeout | null = null;
  private eventsSinceReconcile = 0;
  private reconciling: Promise<void> | null = null;
  private closed = false;

  constructor(options: RequestWatcherOptions) {
    this.options = options;
  }

  /** Watches, then runs the first reconcile: every existing file is considered once. */
  async start(): Promise<void> {
    if (this.options.watch !== false) await this.watch();
    await this.reconcile();
    this.scheduleRescan();
  }

  private async watch(): Promise<void> {
    const watcher = chokidar.watch(this.options.paths, {
      ignoreInitial: true,
      // Like the reconcile walk: symlinked directories are not followed, so loops cannot occur.
      followSymlinks: false,
      ignored: (path, stats) => isIgnored(path, stats),
    });
    this.watcher = watcher;
    watcher.on('all', (_event, path) => this.touch(path));
    watcher.on('error', (error) => this.options.onError(error as Error));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    await this.watcher?.close();
    await this.reconciling;
  }

  /** Restarts the quiet period of `path`. */
  touch(path: string): void {
    if (this.closed || !isMarkdownPath(path)) return;
    this.eventsSinceReconcile++;
    const previous = this.timers.get(path);
    if (previous) clearTimeout(previous);
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        this.options.onSettled(path);
        if (
          this.timers.size === 0 &&
          this.eventsSinceReconcile >= (this.options.burstSize ?? 200)
        ) {
          void this.reconcile();
        }
      }, this.options.debounceMs),
    );
  }

  /** Stats every markdown file; new or changed ones (size or mtime) are touched. */
  reconcile(): Promise<void> {
    this.reconciling ??= this.runReconcile().finally(() => {
      this.reconciling = null;
    });
    return this.reconciling;
  }

  private async runReconcile(): Promise<void> {
    this.eventsSinceReconcile = 0;
    const present = new Set<string>();
    for (const root of this.options.paths) {
      for await (const path of walkMarkdownFiles(root)) {
        if (this.closed) return;
        present.add(path);
        const info = await stat(path, { bigint: true }).catch(() => null);
        if (!info) continue;
        const before = this.seen.get(path);
        if (before && before.size === info.size && before.mtimeNs === info.mtimeNs) continue;
        this.seen.set(path, { size: info.size, mtimeNs: info.mtimeNs });
        if (!this.timers.has(path)) this.settleAfterQuiet(path, Number(info.mtimeMs));
      }
    }
    for (const path of this.seen.keys()) if (!present.has(path)) this.seen.delete(path);
  }

  /** A file found by a pass settles once it has been quiet debounceMs since its last write. */
  private settleAfterQuiet(path: string, mtimeMs: number): void {
    const wait = Math.max(0, mtimeMs + this.options.debounceMs - Date.now());
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        this.options.onSettled(path);
      }, wait),
    );
  }

  private scheduleRescan(): void {
    if (this.closed) return;
    this.rescanTimer = setTimeout(() => {
      void this.reconcile().finally(() => this.scheduleRescan());
    }, this.options.rescanIntervalMs);
  }
}

function isIgnored(path: string, stats: Stats | undefined): boolean {
  const name = basename(path);
  if (name === 'node_modules' || name === '.git' || name.endsWith('.engine-lock')) return true;
  if (!stats) return false;
  // Pipes, sockets and devices named *.md would block a reader: never touch them.
  if (!stats.isFile() && !stats.isDirectory()) return true;
  return stats.isFile() && (!isMarkdownPath(name) || name.endsWith('.tmp'));
}
