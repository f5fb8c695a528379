/** The daemon side of `engine run --monitor-tags`: options to a running Daemon. */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Daemon } from '../daemon/daemon.js';
import { GitClaims } from '../daemon/git-claims.js';
import { watchHeadroom } from '../watch/watch-headroom.js';
import { loadWatchBackend } from '../watch/load-watch-backend.js';
import type { WatcherKind } from '../watch/watch-backend.js';
import { acquireDaemonLock } from '../daemon/daemon-lock.js';
import {
  judgeOptionsOf,
  loadSettings,
  settingFlagValues,
  type SettingSource,
} from '../settings/load-settings.js';
import { daemonOptions } from '../settings/daemon-options.js';
import { DispatchTableSource } from '../daemon/dispatch-table-source.js';
import type { DaemonContext, DaemonOptions, LogFn } from '../daemon/daemon-context.js';
import type { Settings } from '../settings/setting-table.js';
import { writeEngineShim } from '../agents/engine-shim.js';
import { findProgram } from '../dispatch/agent-command.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import { EngineError } from '../errors.js';
import type { Runner } from '../runners/runner.js';
import { isTmuxAvailable, TmuxRunner } from '../runners/tmux-runner.js';
import { PtyRunner } from '../runners/pty-runner.js';
import { appendEvent } from '../sessions/event-log.js';
import { readPause } from '../sessions/limit-pause.js';
import { Notifier } from '../notify/notifier.js';
import { shellSyntaxIn, splitNotifyTemplate } from '../notify/notify-event.js';
import { systemProbe } from '../process/process-identity.js';
import { checkWorktreeRoot } from '../worktrees/worktree.js';
import { readRequestFile } from '../files/read-text-file.js';
import { ScanPool, summaryOf } from '../tags/scan-pool.js';
import { scanTagsFast } from '../tags/scan-fast.js';
import { DaemonControl } from '../control/daemon-control.js';
import type { StatusQuery } from '../control/protocol.js';
import { createLogger } from './logger.js';
import { openLogFile } from '../service/log-file.js';
import { ENGINE_MAIN, projectTablePath, readDispatchTable, shippedTableNote } from './paths.js';
import { projectRoot } from './project-root.js';
import { statusPlace, statusText } from './status.js';
import { printLine } from './output.js';
import { waitReasonOf } from '../status/wait-reasons.js';
import { waitText } from '../status/wait-text.js';
import { blockerText } from '../dispatch/depends-on.js';

/**
 * The flags: the invocation's own, and each setting's flag by its name in the settings table
 * (src/settings/setting-table.ts), undefined when not given.
 */
export interface RunArgs extends Record<string, unknown> {
  args: string[];
  'monitor-tags'?: string;
  root?: string;
  once: boolean;
  'dry-run': boolean;
  'log-format': 'text' | 'json';
  verbose: boolean;
  board: boolean;
  'board-port': number;
  'board-host': string;
  'board-read-only': boolean;
}

type Args = RunArgs;

export async function runDaemon(args: Args): Promise<void> {
  dropLauncherArena(process.env);
  lastOfRepeated(args);
  if (args.board && (args.once || args['dry-run']))
    throw new EngineError('--board goes with a running daemon, not with --once or --dry-run');
  const root = await projectRoot(args.root);
  const resolved = await loadSettings(root, settingFlagValues(args), process.env);
  const { settings } = resolved;
  const logFile =
    settings.logFile === null ? undefined : openLogFile(resolve(root, settings.logFile));
  const log = createLogger(args['log-format'], args.verbose, logFile);
  const paths = args.args.length > 0 ? args.args.map((p) => resolve(p)) : [join(root, 'sessions')];
  const options = daemonOptions(resolved, { root, paths });
  if (watchesWithChokidar(options, resolved.from.watcher)) {
    // parcel's watch thread dies when a signal interrupts its poll (EINTR), leaking its inotify
    // instance, and its unsubscribe then hangs the daemon; git claims start git processes all the
    // time, whose exits are such signals. chokidar (Node's own fs.watch) has neither fault.
    options.watcher = 'chokidar';
    log('info', 'claims: git: watching with chokidar (docs/MULTI-HOST.md, "The watch")');
  }
  if (options.watch && !args.once && !args['dry-run'])
    options.watcher = await usableWatcher(options.watcher, log);
  if (options.worktree) await checkWorktreeRoot(root);
  if (options.claims === 'git' && args.once)
    throw new EngineError(
      '--once goes with local claims: a claim of --claims git is a lease, renewed while its daemon runs',
    );
  // A dry run makes no claim, no push and no checkout move: with git claims its queue would be
  // the daemon's checkout, which only a running daemon keeps (engine status shows its order).
  if (options.claims === 'git' && args['dry-run'])
    throw new EngineError(
      "--dry-run goes with local claims: with --claims git the queue is the shared branch, read from the running daemon's checkout; engine status lists its waiting items in dispatch order",
    );
  // A dry run starts no agent: it answers without one installed.
  if (!args['dry-run']) checkAgentProgram(options);
  const runner = await startRunner(args, options);
  // The lock first: a second daemon on the root is refused before it touches any checkout.
  // ENGINE_UNSAFE_NO_LOCK lets the reliability suite force two daemons onto one root.
  const lock =
    args['dry-run'] || process.env.ENGINE_UNSAFE_NO_LOCK === '1'
      ? null
      : await acquireDaemonLock(root).catch(async (error: unknown) => {
          await runner.close();
          throw error;
        });
  try {
    await runLocked(args, { options, settings, log, runner });
  } finally {
    await lock?.release();
  }
  // Agents under the pty runner are children of this process and would keep it alive: they end
  // with the daemon (docs/DAEMON.md), and the next start requeues them.
  if (runner instanceof PtyRunner) process.exit(0);
}

/** The daemon, once the root's lock is held (none for --dry-run): its stores, then its mode. */
async function runLocked(
  args: Args,
  {
    options,
    settings,
    log,
    runner,
  }: {
    options: DaemonOptions;
    settings: Settings;
    log: ReturnType<typeof createLogger>;
    runner: Runner;
  },
): Promise<void> {
  const { root } = options;
  const pool = new ScanPool();
  const notifier = notifierOf(settings, options, log);
  let claims: GitClaims | null = null;
  try {
    // Git claims: the queue, its dependencies and directives/TAGS.md are read from the daemon's
    // checkout of the shared branch.
    claims = options.claims === 'git' ? await GitClaims.open(options, log, systemProbe) : null;
    if (claims) options.paths = await claims.paths();
    const routes = await dispatchRoutes(options, claims?.agentRoot ?? root, log);
    const ctx = daemonContext(options, { routes, runner, log, pool, notifier });
    if (claims) ctx.claims = claims;
    const control = args.once || args['dry-run'] ? null : controlOf(options, ctx, pool, settings);
    if (control) ctx.observer = control.observer;
    if (options.agent !== 'custom' && !args['dry-run']) {
      await writeEngineShim(root, process.execPath, ENGINE_MAIN);
    }
    const daemon = new Daemon(ctx);
    await runDaemonMode(args, { daemon, control }, { options, settings }, log);
  } finally {
    await claims?.close();
    await pool.close();
    await runner.close();
    await notifier.close();
  }
}

/** The notifications of recorded events (--on-event, --notify-via). */
function notifierOf(settings: Settings, options: DaemonOptions, log: LogFn): Notifier {
  const syntax = settings.notify === null ? [] : shellSyntaxIn(settings.notify);
  if (syntax.length > 0) {
    log(
      'warn',
      `--on-event: the command runs without a shell, so its ${syntax.join(' ')} reach it as plain arguments; to use a shell, run one: sh -c 'echo "$1" >> events.log' sh {event}`,
    );
  }
  return new Notifier({
    root: options.root,
    command: settings.notify === null ? null : splitNotifyTemplate(settings.notify),
    via: settings.notifyVia,
    tmuxSocket: options.runner === 'tmux' ? options.tmuxSocket : undefined,
    log,
  });
}

/** An option given twice arrives as an array: the last one wins, as in most CLIs. */
function lastOfRepeated(args: Args): void {
  for (const [key, value] of Object.entries(args)) {
    if (Array.isArray(value) && key !== 'args' && key !== '_')
      (args as unknown as Record<string, unknown>)[key] = value.at(-1);
  }
}

/** The runner of the agents, once it can run them. */
async function startRunner(args: Args, options: DaemonOptions): Promise<Runner> {
  if (options.runner === 'tmux' && !(await isTmuxAvailable())) {
    throw new EngineError('tmux is not installed: install it, or use --runner pty');
  }
  if (args.once && options.runner === 'pty') {
    throw new EngineError(
      '--once needs --runner tmux: agents under the pty runner end with the daemon',
    );
  }
  const runner: Runner =
    options.runner === 'tmux'
      ? new TmuxRunner({ socket: options.tmuxSocket ?? undefined, session: options.tmuxSession })
      : new PtyRunner();
  if (runner instanceof PtyRunner) await runner.ensureLoaded();
  return runner;
}

/** The agent's program must be on PATH; Claude Code's is kept as an absolute path. */
function checkAgentProgram(options: DaemonOptions): void {
  if (options.agent === 'custom') {
    const program = options.agentTemplate[0] as string;
    if (!findProgram(program)) {
      throw new EngineError(
        `The agent program '${program}' is not on PATH. Install it, or set --agent-cmd / ENGINE_AGENT_CMD / agentCommand in directives/engine.json (see docs/DAEMON.md)`,
      );
    }
  } else {
    const bin = options.claudeBin ?? 'claude';
    const found = findProgram(bin);
    if (!found) {
      throw new EngineError(
        `Claude Code ('${bin}') is not on PATH, which the --agent ${options.agent} profile runs. Install it, give its path with --claude-bin / ENGINE_CLAUDE_BIN / claudeBin in directives/engine.json, or choose another agent with --agent-cmd (see docs/DAEMON.md)`,
      );
    }
    // Absolute: the agent runs in the root, wherever the daemon was started.
    options.claudeBin = resolve(found);
  }
}

/** The daemon's context: the real clock, timers, process probe, event log and scan pool. */
function daemonContext(
  options: DaemonOptions,
  {
    routes,
    runner,
    log,
    pool,
    notifier,
  }: {
    routes: DispatchTableSource;
    runner: Runner;
    log: LogFn;
    pool: ScanPool;
    notifier: Notifier;
  },
): DaemonContext {
  const { root } = options;
  return {
    options,
    routes,
    runner,
    log,
    now: () => new Date(),
    timers: { setTimeout: (callback, ms) => setTimeout(callback, ms), clearTimeout },
    probe: systemProbe,
    // Every recorded event passes here once. Its notification, if any, is derived from it, once
    // it is in the log: a restart that finds the event there does not notify again.
    recordEvent: async (event) => {
      const recorded = { ...event, time: new Date().toISOString() };
      await appendEvent(root, recorded).catch((error: unknown) =>
        log('warn', `event log: ${String(error)}`),
      );
      notifier.notify(recorded);
    },
    // The fast path decides most files on this thread; remark runs in the bounded pool.
    scan: async (text) => {
      const fast = scanTagsFast(text);
      return fast ? summaryOf(fast, text) : pool.scan(text);
    },
    readRequest: readRequestFile,
  };
}

/** The live tag index and the control socket of a daemon that keeps running. */
function controlOf(
  options: DaemonOptions,
  ctx: DaemonContext,
  pool: ScanPool,
  settings: Settings,
): DaemonControl {
  return new DaemonControl({
    root: options.root,
    paths: options.paths,
    // chokidar reports markdown files only, never the sync file: an index could not answer.
    watch: options.watch && options.watcher !== 'chokidar',
    scan: (text) => ctx.scan(text),
    pool,
    log: ctx.log,
    render: statusText,
    warmQuery: () => warmStatusQuery(options.root, settings),
  });
}

/**
 * The query the daemon warms its status cache with: a plain status's. A table that does not
 * parse is the table source's to report (once); the warm-up only says it skipped.
 */
async function warmStatusQuery(root: string, settings: Settings): Promise<StatusQuery> {
  const query = await plainStatusQuery(root, settings);
  try {
    parseDispatchTable(query.table.text, query.table.path);
  } catch {
    throw new Error(`${query.table.path} does not parse (said above)`);
  }
  return query;
}

/** What a plain `engine status` in this project asks (status.ts, with no paths given). */
export async function plainStatusQuery(root: string, settings: Settings): Promise<StatusQuery> {
  const { paths, tableRoot } = await statusPlace(root, []);
  const used = await readDispatchTable(tableRoot);
  return {
    paths,
    table: { text: used.text, path: used.path },
    judging: {
      options: judgeOptionsOf(settings),
      debounceMs: settings.debounceMs,
      maxAgents: settings.maxAgents,
      agingMs: settings.agingMs,
      nowMs: Date.now(),
    },
  };
}

async function runDaemonMode(
  args: Args,
  { daemon, control }: { daemon: Daemon; control: DaemonControl | null },
  { options, settings }: { options: DaemonOptions; settings: Settings },
  log: ReturnType<typeof createLogger>,
): Promise<void> {
  const { root } = options;

  if (args['dry-run']) {
    const plan = await daemon.plan();
    const pause = await readPause(root);
    if (pause) printLine(`Paused until ${pause.until}: ${pause.reason} (engine resume lifts it)`);
    if (plan.length === 0) printLine('Nothing to dispatch.');
    const now = new Date();
    plan.forEach((item, i) =>
      printLine(
        `${i + 1}. ${item.file}  #delegated-${item.noun} → ${item.skill}  (weight P${item.weight}${item.aged ? ', aged one band up' : ''}, priority ${item.tablePriority})${item.wait ? `  (${waitText(waitReasonOf(item.wait), now)})` : ''}${item.blockers.map((b) => `  (${blockerText(b)})`).join('')}`,
      ),
    );
    await daemon.stop();
    return;
  }

  if (args.once) {
    await daemon.runOnce();
    await daemon.stop();
    return;
  }
  // Before the daemon starts: a board that cannot listen stops the start before any claim.
  const board = args.board ? await startDaemonBoard(args, options, settings, log) : null;
  try {
    await runUntilSignal(daemon, control, options, log);
  } finally {
    await board?.close();
  }
}

/** The daemon, from its start until SIGINT or SIGTERM. */
async function runUntilSignal(
  daemon: Daemon,
  control: DaemonControl | null,
  options: DaemonOptions,
  log: LogFn,
): Promise<void> {
  keepHeapSmall();
  await daemon.start();
  log(
    'info',
    `monitoring ${options.monitor.join(',')} under ${options.paths.join(', ')} (root ${options.root})`,
  );
  // After start: counting the tree's directories competed with the first pass for the CPU.
  if (options.watch) warnOnWatchHeadroom(options.paths, options.watcher, log);
  await control?.start(() => daemon.eventsComplete);
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  log('info', 'stopping: no new claims; running agents keep running');
  await control?.close();
  await daemon.stop();
}

/** `--board`: the board over the daemon's root and paths, answered from its control socket as `engine board` is. */
async function startDaemonBoard(
  args: Args,
  options: DaemonOptions,
  settings: Settings,
  log: LogFn,
) {
  const flags = {
    host: args['board-host'],
    port: args['board-port'],
    readOnly: args['board-read-only'],
  };
  const { startBoard } = await import('./start-board.js');
  // The daemon's settings (its flags included): the board words the waits as the daemon judges them.
  return startBoard(options.root, options.paths, flags, log, settings);
}

/**
 * The launcher (scripts/bundle-lean.mjs) set MALLOC_ARENA_MAX for this process, where the user had
 * none: glibc read it at start, and the agents, hooks and tmux the daemon starts get the
 * environment as the user had it.
 */
function dropLauncherArena(env: NodeJS.ProcessEnv): void {
  // The launcher's own value, not a user's beside a mark inherited by mistake.
  if (env.ENGINE_LAUNCHER_ARENA !== '1' || env.MALLOC_ARENA_MAX !== '2') return;
  delete env.MALLOC_ARENA_MAX;
  delete env.ENGINE_LAUNCHER_ARENA;
}

/**
 * V8 grows its young generation up to 16 MB semi-spaces when a pass over the tree allocates
 * fast, and a long-lived daemon keeps them: about 30 MB resident at 50,000 files. Semi-spaces
 * that never grow cost a few more scavenges per pass. `--optimize-for-size` grows the old
 * generation in smaller steps and gives free pages back at once: the tag index's build and the
 * warm status (reading the tree once more after ready) no longer leave 20 to 40 MB of garbage
 * resident for a minute, for a few seconds more CPU there (docs/BENCHMARKS.md).
 * Both flags are read as the heap resizes, so setting them here, before the first pass, takes
 * effect.
 */
function keepHeapSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--optimize-for-size');
}

/**
 * The table in force at start, reloaded from `<root>/directives/TAGS.md` while the daemon runs;
 * `root`: the project root, or its counterpart in the checkout of the shared branch.
 */
async function dispatchRoutes(
  options: DaemonOptions,
  root: string,
  log: LogFn,
): Promise<DispatchTableSource> {
  const path = projectTablePath(root);
  // Stat first: a save after it is then seen as a save, even before the first check.
  const mtimeMs = (await stat(path).catch(() => null))?.mtimeMs ?? null;
  const used = await readDispatchTable(root);
  if (used.shipped) log('warn', shippedTableNote(root));
  return new DispatchTableSource({
    path,
    table: parseDispatchTable(used.text, used.path),
    text: used.shipped ? null : used.text,
    mtimeMs: used.shipped ? null : mtimeMs,
    debounceMs: options.debounceMs,
    checkIntervalMs: options.rescanIntervalMs,
    watch: options.watch,
    log,
  });
}

/** The backend that will watch: chokidar where @parcel/watcher cannot load (said once, here). */
async function usableWatcher(requested: WatcherKind, log: LogFn): Promise<WatcherKind> {
  return (await loadWatchBackend(requested, (message) => log('warn', message))).kind;
}

function warnOnWatchHeadroom(paths: string[], watcher: WatcherKind, log: LogFn): void {
  void watchHeadroom(paths, { watcher }).then((report) => {
    if (report) log('warn', report);
  });
}

/**
 * Whether a daemon of git claims watches with chokidar (docs/MULTI-HOST.md, "The watch"): unless a
 * backend is chosen by flag or environment. engine.json as `engine init` writes it holds every
 * setting at its default (`node`, or `parcel` as earlier engines wrote it), so neither there is a
 * choice.
 */
export function watchesWithChokidar(
  options: { claims: string; watcher: string },
  from: SettingSource,
): boolean {
  if (options.claims !== 'git') return false;
  return from === 'default' || (from === 'engine.json' && options.watcher !== 'chokidar');
}
