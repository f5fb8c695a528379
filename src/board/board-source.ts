/**
 * Where the board's data comes from: the report `engine status --json` gives, and word of each
 * change. The server takes a source: the daemon's control socket (daemon-source.ts) or the
 * files. The file source reads the files (status/collect-status) and watches them (watch/),
 * coalescing a burst of changes into one word, said within a second of the first. Only a change
 * to what the report reads counts, the same names whichever watch backend runs.
 */
import { basename, join, sep } from 'node:path';
import { daemonLockPath } from '../daemon/daemon-lock.js';
import { ENGINE_JSON } from '../settings/setting-table.js';
import { eventLogPath } from '../sessions/event-log.js';
import { pausePath } from '../sessions/limit-pause.js';
import { SESSION_FILES } from '../sessions/session-dir.js';
import type { StatusReport } from '../status/collect-status.js';
import { IGNORE_RULES, isMarkdownPath } from '../tags/walk-markdown.js';
import { loadWatchBackend } from '../watch/load-watch-backend.js';
import type { WatcherKind } from '../watch/watch-backend.js';
import { WatchedRoots } from '../watch/watched-roots.js';

/** Who answered: the daemon's control socket, or the files read by this process. */
export type ReportOrigin = 'daemon' | 'files';

export interface SourcedReport {
  report: StatusReport;
  from: ReportOrigin;
}

export interface BoardSource {
  /** The item table as it is now, as `engine status --json` reports it, and who answered. */
  report(): Promise<SourcedReport>;
  /** `onChange` is called when the report may have changed; returns the unsubscribe. */
  subscribe(onChange: () => void): () => void;
  close(): Promise<void>;
}

/** How long a burst of changes is gathered: quiet for QUIET_MS, or MAX_WAIT_MS at most. */
export const QUIET_MS = 100;
export const MAX_WAIT_MS = 500;

/**
 * Calls `fire` once per burst of `poke`s: after QUIET_MS without one, and at most MAX_WAIT_MS
 * after the first (an agent's transcript grows all the time: the page must still update).
 */
export function coalesce(fire: () => void): { poke(): void; stop(): void } {
  let first = 0;
  let timer: NodeJS.Timeout | null = null;
  const due = () => {
    timer = null;
    first = 0;
    fire();
  };
  return {
    poke() {
      const now = Date.now();
      if (first === 0) first = now;
      if (timer) clearTimeout(timer);
      timer = setTimeout(due, Math.max(0, Math.min(QUIET_MS, first + MAX_WAIT_MS - now)));
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

/**
 * A session's files the report reads: its records and its agent's state. Not its transcript
 * (agent.log) nor its heartbeat, which change all the time while an agent runs and change no card.
 */
const SESSION_RECORDS: readonly string[] = Object.values(SESSION_FILES).filter(
  (name) => name !== SESSION_FILES.agentLog && name !== SESSION_FILES.heartbeat,
);

/** Whether a change to `path` may change the report: the rest would only make each tab re-read. */
export function countsForReport(root: string, paths: string[]): (path: string) => boolean {
  const sessions = join(root, 'sessions');
  const exact = new Set([
    eventLogPath(root),
    pausePath(root),
    daemonLockPath(root),
    join(root, 'directives', 'TAGS.md'),
    join(root, ENGINE_JSON),
  ]);
  const below = (path: string, dir: string) => path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
  return (path) =>
    exact.has(path) ||
    (isMarkdownPath(path) && paths.some((dir) => path === dir || below(path, dir))) ||
    (below(path, sessions) && SESSION_RECORDS.includes(basename(path)));
}

/** The names besides markdown the watch must report (chokidar reports only markdown unless told). */
const WATCHED_NAMES = [
  ...SESSION_RECORDS,
  ...['events.jsonl', 'pause.json', 'daemon.lock', 'engine.json'],
];

export interface FileSourceOptions {
  root: string;
  /** The directories whose requests are read. */
  paths: string[];
  /** Collects the report (status/collect-status with the project's settings and table). */
  collect: () => Promise<StatusReport>;
  watcher: WatcherKind;
  onError: (error: Error) => void;
}

/** The files as they are: each report read afresh; the watch says when to read again. */
export async function fileBoardSource(options: FileSourceOptions): Promise<BoardSource> {
  const listeners = new Set<() => void>();
  const burst = coalesce(() => listeners.forEach((listener) => listener()));
  const backend = await loadWatchBackend(options.watcher, (message) =>
    options.onError(new Error(message)),
  );
  const { root } = options;
  const counts = countsForReport(root, options.paths);
  // The requests, and what the report reads besides: session records and agent states, the
  // event log, the pause and the daemon lock (all under sessions/), and the dispatch table and
  // settings (directives/).
  const roots = new WatchedRoots({
    paths: [...new Set([...options.paths, join(root, 'sessions'), join(root, 'directives')])],
    backend,
    ignore: { ...IGNORE_RULES, fileNames: WATCHED_NAMES },
    onChange: (path) => {
      if (counts(path)) burst.poke();
    },
    onError: options.onError,
    onReopened: () => burst.poke(),
  });
  await roots.start();
  return {
    report: async () => ({ report: await options.collect(), from: 'files' }),
    subscribe(onChange) {
      listeners.add(onChange);
      return () => listeners.delete(onChange);
    },
    async close() {
      burst.stop();
      listeners.clear();
      await roots.close();
    },
  };
}
