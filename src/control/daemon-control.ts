/**
 * What a running daemon serves besides its work: the live tag index of its watched directories,
 * kept by the daemon's watch (the observer given to its context), and the control socket that
 * answers from it. Started once the daemon is ready; the index is built in the background.
 */
import { statSync } from 'node:fs';
import type { DaemonObserver, LogFn } from '../daemon/daemon-context.js';
import { IndexSync, removeDeadSyncFiles } from '../index/index-sync.js';
import { TagIndex, type SeenFiles } from '../index/tag-index.js';
import type { ScanPool, ScanSummary } from '../tags/scan-pool.js';
import { ControlServer } from './control-server.js';
import type { RenderStatus, StatusQuery } from './protocol.js';
import { StatusCache } from './status-cache.js';

export interface DaemonControlOptions {
  root: string;
  /** The daemon's watched paths; the directories among them are indexed. */
  paths: string[];
  /**
   * false: the daemon does not watch (reconcile passes only), or its backend reports no sync file
   * (chokidar): no sync, so no index.
   */
  watch: boolean;
  /** The daemon's scan (its context's): the fast path, else its pool. */
  scan: (text: string) => Promise<ScanSummary>;
  pool: ScanPool;
  log: LogFn;
  /** The CLI's rendering of a status report, for `engine status` asking the printed text. */
  render: RenderStatus;
  /**
   * What a plain `engine status` would ask: asked once the index is built, so that the first
   * status a user runs reads only what changed since (25 s at 50,000 files otherwise).
   */
  warmQuery?: () => Promise<StatusQuery>;
}

export class DaemonControl {
  private readonly sync = new IndexSync();
  private readonly index: TagIndex | null;
  private readonly cache: StatusCache;
  private server: ControlServer | null = null;
  private closed = false;
  /** The daemon's word on its watch (Daemon.eventsComplete), once started. */
  private eventsComplete: () => boolean = () => false;

  /** What the daemon's context tells: watch events, watch errors, item moves. */
  readonly observer: DaemonObserver = {
    onEvent: (path) => {
      if (this.sync.observe(path)) return;
      this.index?.mark(path);
      this.cache.forget(path);
      this.server?.changed();
    },
    onItemMove: () => this.server?.changed(),
  };

  constructor(private readonly options: DaemonControlOptions) {
    const directories = options.paths.filter((path) => isDirectory(path));
    this.index = options.watch
      ? new TagIndex(
          directories,
          options.scan,
          () => this.eventsComplete(),
          () => this.server?.indexChanged(),
        )
      : null;
    this.cache = new StatusCache((path) => this.index?.isTagged(path) === true);
  }

  /** Opens the socket and builds the index; `eventsComplete`: the daemon's word on its watch. */
  async start(eventsComplete: () => boolean): Promise<void> {
    this.eventsComplete = eventsComplete;
    const { root, pool, log, render } = this.options;
    this.server = await ControlServer.start({
      root,
      render,
      index: this.index,
      sync: this.sync,
      cache: this.cache,
      pool,
      scan: this.options.scan,
      log,
    });
    const index = this.index;
    if (!index) return;
    for (const path of this.options.paths) removeDeadSyncFiles(path);
    const started = Date.now();
    void this.seenFiles()
      .then((seen) => index.build(seen))
      .then(
        () => {
          // Closed during the build: it ended incomplete.
          if (this.closed) return;
          log(
            'info',
            `tag index ready: ${index.size} files with tags (${Date.now() - started} ms)`,
          );
          void this.warm();
        },
        (error: unknown) => log('warn', `tag index: ${String(error)}`),
      );
  }

  /**
   * The warm-up's part in the index's build: the findings of each file it reads, from that read
   * (the warm-up after it then reads only what the cache does not hold). None without a warm-up
   * or when its query cannot be had (the warm-up says why).
   */
  private async seenFiles(): Promise<SeenFiles | undefined> {
    const { warmQuery } = this.options;
    if (!warmQuery || !this.server) return undefined;
    try {
      return this.server.seenFiles(await warmQuery());
    } catch {
      return undefined;
    }
  }

  private async warm(): Promise<void> {
    const { warmQuery, log } = this.options;
    if (!warmQuery || !this.server) return;
    const started = Date.now();
    try {
      const query = await warmQuery();
      if (!this.server) return;
      await this.server.warm(query);
      log('info', `status warmed (${Date.now() - started} ms)`);
    } catch (error) {
      // Nothing is lost: the first status reads the files the cache does not hold.
      log('info', `status not warmed: ${String(error)}`);
    }
  }

  async close(): Promise<void> {
    // First: a build that ends while the server closes says nothing and warms nothing.
    this.closed = true;
    const building = this.index?.close();
    const server = this.server;
    this.server = null;
    await server?.close();
    await building;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
