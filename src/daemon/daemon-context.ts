/** What every part of the daemon shares: the root, its options, the runner, a clock and a log. */
import type { AgentKind } from '../agents/agent-profile.js';
import type { DispatchRoute } from '../dispatch/dispatch-table.js';
import type { readRequestFile } from '../files/read-text-file.js';
import type { ProcProbe } from '../process/proc-probe.js';
import type { Runner } from '../runners/runner.js';
import type { EventInput } from '../sessions/event-log.js';
import type { ScanSummary } from '../tags/scan-pool.js';
import type { WatcherKind } from '../watch/watch-backend.js';

export type LogLevel = 'info' | 'warn' | 'error' | 'debug';
export type LogFn = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

export interface DaemonOptions {
  root: string;
  /** Directories (or files) watched for request files. */
  paths: string[];
  /** Tags or globs, each `#delegated-...`. */
  monitor: string[];
  debounceMs: number;
  /** false: reconcile passes only, no file watch. */
  watch: boolean;
  /** The watch backend: parcel (one inotify watch per directory) or chokidar (per file). */
  watcher: WatcherKind;
  rescanIntervalMs: number;
  reapIntervalMs: number;
  claimGraceMs: number;
  staleAfterMs: number;
  /** How long a finished interactive agent stays open (src/daemon/close-finished.ts); 0: never closed. */
  closeAfterDoneMs: number;
  /** 0: no cap. */
  maxAgents: number;
  /** Priority aging (--aging): an item ready longer than this orders one band up; 0: off. */
  agingMs: number;
  /** The agent profile (src/agents/agent-profile.ts). */
  agent: AgentKind;
  /** The command template of a `custom` agent, split. */
  agentTemplate: string[];
  /** Claude Code's program, as an absolute path: for the `claude` and `claude-print` profiles. */
  claudeBin: string | null;
  runner: 'tmux' | 'pty';
  tmuxSocket: string | null;
  tmuxSession: string;
  heartbeatMs: number;
  /** Each claim's agent in its own git worktree (src/worktrees/). */
  worktree: boolean;
  /**
   * How often a running claim is checked when nothing was heard of it; a change of its request
   * file or of its session's `.agent` or `.exit` has it checked at once.
   */
  pollMs: number;
  /** Agent failures of an item sent back to `#delegated-X` before one goes to a human. */
  retries: number;
  /** The first retry's (and launch retry's) wait; each next one doubles it. */
  retryBackoffMs: number;
  /** How long the queue pauses after a usage limit whose reset time the agent did not give. */
  limitBackoffMs: number;
}

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
}
