/**
 * The daemon's control socket (docs/DAEMON.md, "The control socket"): `status` and `find`
 * answered from the live tag index, and a stream of change notices. The socket lives in a
 * directory only its owner may enter (0700) and is itself 0600: another user can neither connect
 * nor learn what it serves. A socket file left by a dead daemon is replaced only by the daemon
 * that holds the daemon lock, the only caller of start().
 */
import { chmodSync, lstatSync, mkdirSync, unlinkSync, type Stats } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { LogFn } from '../daemon/daemon-context.js';
import { parseDispatchTable, type DispatchTable } from '../dispatch/dispatch-table.js';
import { findInIndex, type IndexFindResult } from '../index/find-in-index.js';
import type { IndexSync } from '../index/index-sync.js';
import type { SeenFiles, TagIndex } from '../index/tag-index.js';
import { systemProbe } from '../process/process-identity.js';
import type { StatusCache } from './status-cache.js';
import { seenFilesOf } from './warm-from-build.js';
import {
  collectStatus,
  type FileFindingsCache,
  type StatusJudging,
  type StatusReport,
} from '../status/collect-status.js';
import type { ScanPool, ScanSummary } from '../tags/scan-pool.js';
import { parseTagPattern } from '../tags/tag-name.js';
import { isIgnoredDirectoryName, isMarkdownPath } from '../tags/walk-markdown.js';
import {
  CONTROL_VERSION,
  controlSocketPath,
  MAX_LINE_BYTES,
  MAX_SOCKET_PATH_BYTES,
  type Answer,
  type FindQuery,
  type Request,
  type RenderStatus,
  type StatusQuery,
  type StatusTextQuery,
} from './protocol.js';

export interface ControlServerOptions {
  root: string;
  /** null: no index (the watch is off), so no answer from it. */
  index: TagIndex | null;
  sync: IndexSync;
  cache: StatusCache;
  pool: ScanPool;
  /** The daemon's scan: the fast path here, its pool for the rest. */
  scan: (text: string) => Promise<ScanSummary>;
  log: LogFn;
  /** The CLI's rendering of a report (the daemon's layer cannot import the CLI's). */
  render: RenderStatus;
  /** How long a query waits for the index to be built, and for a sync. */
  waitMs?: number;
}

/** Notices within this period go out as one. */
const COALESCE_MS = 50;

/** Refused: the client reads the files instead. */
class CannotAnswer extends Error {}

export class ControlServer {
  private readonly connections = new Set<Socket>();
  private readonly subscribers = new Set<Socket>();
  /** Subscribers with a notice not yet handed to the kernel: one more would say nothing new. */
  private readonly unsent = new Set<Socket>();
  private notice: NodeJS.Timeout | null = null;
  /** Reads that changed the index (indexChanged()): an answer made during a sync needs none. */
  private indexChanges = 0;

  private constructor(
    private readonly options: ControlServerOptions,
    private readonly server: Server,
    readonly path: string,
    private readonly inode: number,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Listens on the root's control socket; null (said in the log) when it cannot be made. */
  static async start(options: ControlServerOptions): Promise<ControlServer | null> {
    const path = controlSocketPath(options.root);
    const why = prepare(path);
    if (why !== null) {
      options.log('warn', `no control socket (${why}): engine status and find read the files`);
      return null;
    }
    const server = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => resolve());
      });
      chmodSync(path, 0o600);
    } catch (error) {
      server.close();
      options.log(
        'warn',
        `no control socket at ${path} (${String(error)}): clients read the files`,
      );
      return null;
    }
    return new ControlServer(options, server, path, lstatSync(path).ino);
  }

  /** Something changed (a file, the item table, a session): subscribers hear of it once. */
  changed(): void {
    if (this.notice || this.subscribers.size === 0) return;
    this.notice = setTimeout(() => {
      this.notice = null;
      for (const socket of this.subscribers) this.notify(socket);
    }, COALESCE_MS);
  }

  /**
   * A read changed what the index holds (tag-index.ts onChange): an answer made while its sync
   * ran is made again. Every change of a file whose findings the status cache keeps is one: the
   * cache keeps only files the index holds with their tags.
   */
  indexChanged(): void {
    this.indexChanges++;
    this.changed();
  }

  /** At most one unsent notice per subscriber, so one that never reads costs one line. */
  private notify(socket: Socket): void {
    if (this.unsent.has(socket)) return;
    this.unsent.add(socket);
    socket.write(`${JSON.stringify({ event: 'changed' })}\n`, () => this.unsent.delete(socket));
  }

  async close(): Promise<void> {
    if (this.notice) clearTimeout(this.notice);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.connections) socket.destroy();
    await closed;
    // Only our own socket: a daemon started after this one may have bound its own.
    try {
      if (lstatSync(this.path).ino === this.inode) unlinkSync(this.path);
    } catch {
      // Gone already.
    }
  }

  private accept(socket: Socket): void {
    this.connections.add(socket);
    let greeted = false;
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.length > MAX_LINE_BYTES) return void socket.destroy();
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        const request = parseRequest(line);
        if (!request || (!greeted && request.op !== 'hello')) return void socket.destroy();
        if (request.op === 'hello') greeted = this.hello(socket, request);
        else void this.answer(socket, request);
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.connections.delete(socket);
      this.subscribers.delete(socket);
      this.unsent.delete(socket);
    });
  }

  private hello(socket: Socket, request: Extract<Request, { op: 'hello' }>): boolean {
    const ok = request.version === CONTROL_VERSION;
    send(
      socket,
      ok
        ? { id: request.id, ok, result: { version: CONTROL_VERSION, pid: process.pid } }
        : { id: request.id, ok, error: `engine version ${CONTROL_VERSION}` },
    );
    if (!ok) socket.end();
    return ok;
  }

  private async answer(socket: Socket, request: Request): Promise<void> {
    try {
      const result = await this.result(socket, request);
      send(socket, { id: request.id, ok: true, result });
    } catch (error) {
      const message = error instanceof CannotAnswer ? error.message : String(error);
      if (!(error instanceof CannotAnswer)) this.options.log('warn', `control: ${message}`);
      send(socket, { id: request.id, ok: false, error: message });
    }
  }

  private async result(socket: Socket, request: Request): Promise<unknown> {
    switch (request.op) {
      case 'find':
        return this.find(request);
      case 'status':
        return this.status(request);
      case 'status-text':
        return this.statusText(request);
      case 'subscribe':
        this.subscribers.add(socket);
        return null;
      default:
        throw new CannotAnswer('unknown request');
    }
  }

  private async find(query: FindQuery): Promise<IndexFindResult> {
    for (const { absolute } of query.paths) {
      const info = lstatOrNull(absolute);
      // A file given by name is read whatever its name; the index keeps markdown files only.
      if (info && !info.isDirectory() && !(info.isFile() && isMarkdownPath(absolute)))
        throw new CannotAnswer(`${absolute}: not a directory or a markdown file`);
    }
    const pattern = parseTagPattern(query.pattern);
    return this.synced(
      query.paths.map((p) => p.absolute),
      (index) =>
        findInIndex(
          index,
          { pattern, tagsOnly: query.tagsOnly, paths: query.paths },
          this.options.pool,
        ),
    );
  }

  /** Asks `query` of itself, for what it leaves in the status cache (daemon-control.ts). */
  async warm(query: StatusQuery): Promise<void> {
    await this.status(query);
  }

  private async statusText(query: StatusTextQuery): Promise<string> {
    const now = new Date(query.judging.nowMs);
    return this.synced(query.paths, async (index) =>
      this.options.render(await this.report(index, query), query.shown, query.json, now),
    );
  }

  private async status(query: StatusQuery): Promise<StatusReport> {
    return this.synced(query.paths, (index) => this.report(index, query));
  }

  private async report(index: TagIndex, query: StatusQuery): Promise<StatusReport> {
    const { table, judging, cache } = this.statusContext(query);
    return collectStatus(this.options.root, query.paths, table, judging, {
      list: (dir) => index.filesBelow(dir),
      scan: this.options.scan,
      cache,
    });
  }

  /**
   * For the index's build: what each file it keeps with its tags gives `query`, kept in the
   * status cache from the build's own read, so that the warm-up reads only the rest.
   */
  seenFiles(query: StatusQuery): SeenFiles {
    const { root, scan } = this.options;
    return seenFilesOf({ root, scan, ...this.statusContext(query) });
  }

  private statusContext(query: StatusQuery): {
    table: DispatchTable;
    judging: StatusJudging;
    cache: FileFindingsCache;
  } {
    const { judging } = query;
    return {
      table: parseDispatchTable(query.table.text, query.table.path),
      judging: {
        now: new Date(judging.nowMs),
        options: judging.options,
        probe: systemProbe,
        debounceMs: judging.debounceMs,
        maxAgents: judging.maxAgents,
        agingMs: judging.agingMs,
        hostsRemote: judging.hostsRemote ?? null,
      },
      cache: this.options.cache.under(
        JSON.stringify([query.table.path, query.table.text, judging.debounceMs]),
      ),
    };
  }

  /**
   * `answer`, made from the index once every write made before now under `paths` is in it. It
   * is made while the sync runs (a watch reports the sync file 50 ms or more after it is made:
   * @parcel/watcher batches its events) and stands if no read changed the index by the sync's
   * end: every write made before the ask was in the index already, or changed nothing it holds
   * (a file without tags, a log beside the requests). Else it is made again, after the sync.
   * Throws CannotAnswer when the index cannot be had in sync.
   */
  private async synced<T>(paths: string[], answer: (index: TagIndex) => Promise<T>): Promise<T> {
    const { index, roots } = await this.built(paths);
    await index.flush();
    const before = this.indexChanges;
    const syncing = this.syncRoots(roots);
    const early = answer(index).then(
      (value) => ({ value }),
      () => null,
    );
    await syncing;
    await index.flush();
    if (!index.trusted)
      throw new CannotAnswer('the watch lost events: a reconcile pass is under way');
    const made = await early;
    if (made && this.indexChanges === before) return made.value;
    return answer(index);
  }

  /** The index, built, and the watched roots of `paths`; CannotAnswer if any is not watched. */
  private async built(paths: string[]): Promise<{ index: TagIndex; roots: Set<string> }> {
    const { index } = this.options;
    if (!index) throw new CannotAnswer('no index: the watch is off');
    const roots = new Set<string>();
    for (const path of paths) {
      const root = index.rootOf(path);
      if (root === null || isInIgnored(path, root)) throw new CannotAnswer(`${path}: not watched`);
      roots.add(root);
    }
    const built = await Promise.race([index.build().then(() => true), delay(this.waitMs, false)]);
    if (!built) throw new CannotAnswer('the index is still being built');
    return { index, roots };
  }

  /** Every write made in `roots` before now has been reported by the watch (index-sync.ts). */
  private async syncRoots(roots: Set<string>): Promise<void> {
    for (const root of roots) {
      if (!(await this.options.sync.sync(root, this.waitMs)))
        throw new CannotAnswer(`no sync with the watch of ${root}`);
    }
  }

  private get waitMs(): number {
    return this.options.waitMs ?? 2000;
  }
}

/**
 * Makes the socket's directory private and clears a dead daemon's socket; why not, or null.
 * The directory is 0700 and ours before anything is bound in it, so the socket is never open to
 * others, whatever the umask.
 */
function prepare(path: string): string | null {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES)
    return `its path ${path} is longer than ${MAX_SOCKET_PATH_BYTES} bytes`;
  const dir = dirname(path);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      return `cannot make ${dir}: ${String(error)}`;
  }
  try {
    const info = lstatSync(dir);
    if (!info.isDirectory() || info.uid !== process.getuid?.())
      return `${dir} is not a directory of this user`;
    if ((info.mode & 0o077) !== 0) chmodSync(dir, 0o700);
    const old = lstatOrNull(path);
    if (old && !old.isSocket()) return `${path} exists and is not a socket`;
    if (old) unlinkSync(path);
  } catch (error) {
    return `cannot prepare ${dir}: ${String(error)}`;
  }
  return null;
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function parseRequest(line: string): Request | null {
  try {
    const value = JSON.parse(line) as Request;
    return typeof value === 'object' && value !== null && typeof value.id === 'number'
      ? value
      : null;
  } catch {
    return null;
  }
}

function send(socket: Socket, answer: Answer): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(answer)}\n`);
}

function isInIgnored(path: string, root: string): boolean {
  return path
    .slice(root.length)
    .split('/')
    .some((name) => name !== '' && isIgnoredDirectoryName(name));
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}
