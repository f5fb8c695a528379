/** What every part of the daemon shares: the root, its options, the runner, a clock and a log. */
import type { DispatchRoute } from '../dispatch/dispatch-table.js';
import type { readRequestFile } from '../files/read-text-file.js';
import type { ProcProbe } from '../process/proc-probe.js';
import type { Runner } from '../runners/runner.js';
import type { EventInput } from '../sessions/event-log.js';
import type { ScanSummary } from '../tags/scan-pool.js';
import type { DaemonOptions } from '../settings/daemon-options.js';
import type { ClaimStore } from './claim-store.js';

// The daemon's options are the resolved settings (src/settings/); its modules take them from here.
export type { DaemonOptions };

export type LogLevel = 'info' | 'warn' | 'error' | 'debug';
export type LogFn = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/** §TAG_DISPATCH as the daemon uses it: the table in force, reloaded when it changes. */
export interface DispatchRoutes {
  /**
   * The dispatchable row of `#delegated-<noun>`, or null: warned about once per table, naming
   * `file`.
   */
  route(noun: string, file: string): DispatchRoute | null;
  /** The Max of `#delegated-<noun>`'s row in force: its agents at once at most (undefined: no cap). */
  cap(noun: string): number | undefined;
  /** Reloads the table when it changes, until close(); `onReload` is told of each new table. */
  watch(onReload: () => void): void;
  close(): Promise<void>;
}

/** The daemon's own timers (the reap timer), injected so that tests can drive them. */
export interface DaemonTimers {
  setTimeout(callback: () => void, ms: number): NodeJS.Timeout;
  clearTimeout(handle: NodeJS.Timeout): void;
}

export interface DaemonContext {
  options: DaemonOptions;
  routes: DispatchRoutes;
  runner: Runner;
  log: LogFn;
  /** The clock every decision reads: claim times, grace periods, readiness. */
  now(): Date;
  timers: DaemonTimers;
  /** What the judge of a claim asks about processes (/proc, kill 0). */
  probe: ProcProbe;
  /** Best effort: a full disk must not stop the daemon. */
  recordEvent(event: EventInput): Promise<void>;
  /** Tags of a text (and its front matter's problems), parsed off the main thread with a time limit. */
  scan(text: string): Promise<ScanSummary>;
  /** Reads a request file: readRequestFile (files/), through here so that tests count reads. */
  readRequest: typeof readRequestFile;
  /** Where claims are kept (claim-store.ts); absent: the request files (the local store). */
  claims?: ClaimStore;
  /** The control socket's feed (src/control/): every watch event, every table move. */
  observer?: DaemonObserver;
}

export interface DaemonObserver {
  /** A path a watch event or a reconcile pass names (request-watcher.ts onEvent). */
  onEvent(path: string): void;
  /** The item table moved an item. */
  onItemMove(): void;
}
