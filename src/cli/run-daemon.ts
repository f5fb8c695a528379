/** The daemon side of `engine run --monitor-tags`: options to a running Daemon. */
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Daemon } from '../daemon/daemon.js';
import { watchHeadroom } from '../watch/watch-headroom.js';
import { loadWatchBackend } from '../watch/load-watch-backend.js';
import type { WatcherKind } from '../watch/watch-backend.js';
import { acquireDaemonLock } from '../daemon/daemon-lock.js';
import { checkNumberOption, type NumberOptionName } from '../daemon/daemon-options.js';
import { DispatchTableSource } from '../daemon/dispatch-table-source.js';
import type { DaemonContext, DaemonOptions, LogFn } from '../daemon/daemon-context.js';
import type { AgentKind } from '../agents/agent-profile.js';
import { writeEngineShim } from '../agents/engine-shim.js';
import { findProgram, splitTemplate } from '../dispatch/agent-command.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import { parseMonitorList } from '../dispatch/monitor-list.js';
import { EngineError } from '../errors.js';
import type { Runner } from '../runners/runner.js';
import { isTmuxAvailable, TmuxRunner } from '../runners/tmux-runner.js';
import { PtyRunner } from '../runners/pty-runner.js';
import { appendEvent } from '../sessions/event-log.js';
import { systemProbe } from '../process/process-identity.js';
import { ScanPool } from '../tags/scan-pool.js';
import { scanTagsFast } from '../tags/scan-fast.js';
import { createLogger } from './logger.js';
import { ENGINE_MAIN, SHIPPED_TAGS } from './paths.js';
import { printLine } from './output.js';

export interface RunArgs {
  args: string[];
  'monitor-tags'?: string;
  root: string;
  'debounce-ms': number;
  watch: boolean;
  watcher: WatcherKind;
  'rescan-interval-ms': number;
  'reap-interval-ms': number;
  'claim-grace-ms': number;
  'stale-after': number;
  'max-agents': number;
  agent?: AgentKind;
  'agent-cmd'?: string;
  'claude-bin'?: string;
  runner: 'tmux' | 'pty';
  'tmux-socket'?: string;
  'tmux-session': string;
  'heartbeat-ms': number;
  'poll-ms': number;
  once: boolean;
  'dry-run': boolean;
  'log-format': 'text' | 'json';
  verbose: boolean;
}

type Args = RunArgs;

export async function runDaemon(args: Args): Promise<void> {
  // An option given twice arrives as an array: the last one wins, as in most CLIs.
  for (const [key, value] of Object.entries(args)) {
    if (Array.isArray(value) && key !== 'args' && key !== '_')
      (args as unknown as Record<string, unknown>)[key] = value.at(-1);
  }
  const root = resolve(args.root);
  const log = createLogger(args['log-format'], args.verbose);
  const number = (name: NumberOptionName): number => checkNumberOption(name, args[name]);
  const options: DaemonOptions = {
    root,
    paths: args.args.length > 0 ? args.args.map((p) => resolve(p)) : [join(root, 'sessions')],
    monitor: parseMonitorList(args['monitor-tags']),
    debounceMs: number('debounce-ms'),
    watch: args.watch,
    watcher:
      args.watch && !args.once && !args['dry-run']
        ? await usableWatcher(args.watcher, log)
        : args.watcher,
    rescanIntervalMs: number('rescan-interval-ms'),
    reapIntervalMs: number('reap-interval-ms'),
    claimGraceMs: number('claim-grace-ms'),
    staleAfterMs: number('stale-after') * 60_000,
    maxAgents: number('max-agents'),
    runner: args.runner,
    tmuxSocket: args['tmux-socket'] ?? process.env.ENGINE_TMUX_SOCKET ?? null,
    tmuxSession: args['tmux-session'],
    heartbeatMs: number('heartbeat-ms'),
    pollMs: number('poll-ms'),
    ...(await agentOptions(root, args)),
  };
  const routes = await dispatchRoutes(options, log);
  if (options.agent === 'custom') {
    const program = options.agentTemplate[0] as string;
    if (!findProgram(program)) {
      throw new EngineError(
        `The agent program '${program}' is not on PATH. Install it, or set --agent-cmd / ENGINE_AGENT_CMD (see docs/DAEMON.md)`,
      );
    }
  } else {
    const bin = options.claudeBin ?? 'claude';
    const found = findProgram(bin);
    if (!found) {
      throw new EngineError(
        `Claude Code ('${bin}') is not on PATH, which the --agent ${options.agent} profile runs. Install it, give its path with --claude-bin / ENGINE_CLAUDE_BIN, or choose another agent with --agent-cmd (see docs/DAEMON.md)`,
      );
    }
    // Absolute: the agent runs in the root, wherever the daemon was started.
    options.claudeBin = resolve(found);
  }
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
  const pool = new ScanPool();
  const ctx: DaemonContext = {
    options,
    routes,
    runner,
    log,
    now: () => new Date(),
    timers: { setTimeout: (callback, ms) => setTimeout(callback, ms), clearTimeout },
    probe: systemProbe,
    recordEvent: (event) =>
      appendEvent(root, { ...event, time: new Date().toISOString() }).catch((error: unknown) =>
        log('warn', `event log: ${String(error)}`),
      ),
    // The fast path decides most files on this thread; remark runs in the bounded pool.
    scan: async (text) => scanTagsFast(text) ?? (await pool.scan(text)),
  };
  if (options.agent !== 'custom' && !args['dry-run']) {
    await writeEngineShim(root, process.execPath, ENGINE_MAIN);
  }
  const daemon = new Daemon(ctx);
  try {
    await runDaemonMode(args, daemon, options, log);
  } finally {
    await pool.close();
    await runner.close();
  }
  // Agents under the pty runner are children of this process and would keep it alive: they end
  // with the daemon (docs/DAEMON.md), and the next start requeues them.
  if (runner instanceof PtyRunner) process.exit(0);
}

async function runDaemonMode(
  args: Args,
  daemon: Daemon,
  options: DaemonOptions,
  log: ReturnType<typeof createLogger>,
): Promise<void> {
  const { root } = options;

  if (args['dry-run']) {
    const plan = await daemon.plan();
    if (plan.length === 0) printLine('Nothing to dispatch.');
    plan.forEach((item, i) =>
      printLine(
        `${i + 1}. ${item.file}  #delegated-${item.noun} → ${item.skill}  (weight P${item.weight}, priority ${item.tablePriority})`,
      ),
    );
    await daemon.stop();
    return;
  }

  // ENGINE_UNSAFE_NO_LOCK lets the reliability suite force two daemons onto one root.
  const lock =
    process.env.ENGINE_UNSAFE_NO_LOCK === '1'
      ? { release: async () => undefined }
      : await acquireDaemonLock(root);
  try {
    if (args.once) {
      await daemon.runOnce();
      await daemon.stop();
      return;
    }
    await daemon.start();
    log(
      'info',
      `monitoring ${options.monitor.join(',')} under ${options.paths.join(', ')} (root ${root})`,
    );
    // After start: counting the tree's directories competed with the first pass for the CPU.
    if (options.watch) warnOnWatchHeadroom(options.paths, options.watcher, log);
    await new Promise<void>((resolveStop) => {
      const stop = () => resolveStop();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    log('info', 'stopping: no new claims; running agents keep running');
    await daemon.stop();
  } finally {
    await lock.release();
  }
}

/**
 * The agent profile: `--agent`; else `custom` when a command template is given (`--agent-cmd`,
 * `ENGINE_AGENT_CMD`, `agentCommand` in directives/engine.json); else `claude`. A Claude profile
 * runs `--claude-bin`, else `ENGINE_CLAUDE_BIN`, else `claude` (looked up once the table is read).
 */
async function agentOptions(
  root: string,
  args: Args,
): Promise<Pick<DaemonOptions, 'agent' | 'agentTemplate' | 'claudeBin'>> {
  const template = await agentTemplate(root, args['agent-cmd']);
  const agent: AgentKind = args.agent ?? (template === null ? 'claude' : 'custom');
  if (agent === 'custom') {
    if (template === null) {
      throw new EngineError(
        '--agent custom needs a command: --agent-cmd, ENGINE_AGENT_CMD or agentCommand in directives/engine.json',
      );
    }
    return { agent, agentTemplate: splitTemplate(template), claudeBin: null };
  }
  if (args['agent-cmd'] !== undefined) {
    throw new EngineError(
      `--agent ${agent} and --agent-cmd exclude each other: --agent-cmd runs a custom agent`,
    );
  }
  const claudeBin = args['claude-bin'] ?? process.env.ENGINE_CLAUDE_BIN ?? 'claude';
  return { agent, agentTemplate: [], claudeBin };
}

/** A custom agent's command template, or null when none is configured. */
async function agentTemplate(root: string, flag: string | undefined): Promise<string | null> {
  if (flag) return flag;
  if (process.env.ENGINE_AGENT_CMD) return process.env.ENGINE_AGENT_CMD;
  const config = await readFile(join(root, 'directives', 'engine.json'), 'utf8').catch(() => null);
  if (config !== null) {
    let parsed: { agentCommand?: unknown };
    try {
      parsed = JSON.parse(config) as { agentCommand?: unknown };
    } catch (error) {
      throw new EngineError(
        `directives/engine.json is not valid JSON: ${(error as Error).message}`,
      );
    }
    if (parsed.agentCommand !== undefined) {
      if (typeof parsed.agentCommand !== 'string')
        throw new EngineError('directives/engine.json: agentCommand must be a string');
      return parsed.agentCommand;
    }
  }
  return null;
}

/** The table in force at start, reloaded from `<root>/directives/TAGS.md` while the daemon runs. */
async function dispatchRoutes(options: DaemonOptions, log: LogFn): Promise<DispatchTableSource> {
  const path = join(options.root, 'directives', 'TAGS.md');
  // Stat first: a save after it is then seen as a save, even before the first check.
  const mtimeMs = (await stat(path).catch(() => null))?.mtimeMs ?? null;
  const own = await readFile(path, 'utf8').catch(() => null);
  if (own === null) log('warn', `no ${path}: using the §TAG_DISPATCH table shipped with engine`);
  return new DispatchTableSource({
    path,
    table:
      own === null
        ? parseDispatchTable(await readFile(SHIPPED_TAGS, 'utf8'), SHIPPED_TAGS)
        : parseDispatchTable(own, path),
    text: own,
    mtimeMs: own === null ? null : mtimeMs,
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
