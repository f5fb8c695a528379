/**
 * Runs agents in windows of a tmux session (default `dispatch`) that a human can attach to.
 *
 * tmux is run with `execFile`, never through a shell, with `TMUX` and `TMUX_PANE` removed from its
 * environment; a server this runner starts gets `-f /dev/null` (no user configuration). Panes are
 * addressed by pane id (`%N`): window names may repeat.
 *
 * How the command reaches the agent (measured with tmux 3.3a, see test/runners):
 * - `new-window ... -- ARG0 ARG1 ...` with two or more arguments: tmux calls execvp on them
 *   directly, no shell. (With ONE argument tmux would run `$default-shell -c ARG0`.) The pane
 *   runs the environment loader (./env-file.ts), a constant sh script that execs the agent's argv,
 *   all positional parameters, with exactly the launch's environment: so `pane_pid` is the
 *   agent's own pid, and no program name or value is read by a shell.
 * - The tmux client treats an argument ENDING in `;` as a command separator (the `;` is dropped
 *   and the following arguments become a new tmux command). Every argument we pass that may end in
 *   `;` is written with `\;`, which tmux turns back into `;` (see `escapeTmuxArgument`).
 * - The `-c` directory is expanded as a tmux format: `#(cmd)` in it would run a shell command. `#`
 *   is doubled (see `escapeTmuxFormat`). The command arguments are not expanded.
 * - The whole command is limited to about 16 KB (tmux's message size); longer fails with an error.
 *   The environment is not part of it (it goes through a file, see ./env-file.ts).
 *
 * Transcripts: with a `logFile`, the window is opened on a silent placeholder (`sleep`), its
 * output is piped to the file (`pipe-pane`), and only then is the pane respawned with the command
 * (`respawn-pane -k`, which keeps the pipe): tmux reads nothing from a pane before its pipe is
 * set, so the agent's very first line is in the file. The pipe is `exec cat >> '<file>'`, run by
 * tmux with `sh -c` after format expansion: the path is single-quoted and its `#` doubled.
 *
 * Exit: this runner does not set `remain-on-exit`, so a window closes when its command exits. On a
 * server where `remain-on-exit` is on, the dead pane stays and `isTargetAlive` reports it dead.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { EngineError, isErrnoException } from '../errors.js';
import { envLoaderArgv, writeEnvFile } from './env-file.js';
import {
  DROPPED_ENV_KEYS,
  AGENT_TERMINAL,
  agentEnv,
  checkLaunch,
  sanitizeWindowName,
  shellQuote,
  TYPING_PAUSE_MS,
  uniqueWindowName,
  type AgentLaunch,
  type CheckedLaunch,
  type LaunchedAgent,
  type Runner,
  type TerminalInput,
} from './runner.js';

export interface ExecResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs `file` with `args` (no shell) and resolves with its output once it exits with status 0.
 * Otherwise rejects with an error carrying `stderr` (string) and `code` (exit status, or an errno
 * string such as `ENOENT` when the program is missing), as `child_process.execFile` does.
 */
export type ExecFn = (
  file: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv },
) => Promise<ExecResult>;

export interface TmuxRunnerOptions {
  /** tmux -L name; undefined = default server */
  socket?: string;
  /** default 'dispatch' */
  session?: string;
  /** injectable for unit tests */
  exec?: ExecFn;
}

/** A tmux command that exited with a non-zero status. */
export class TmuxError extends EngineError {
  readonly stderr: string;

  constructor(message: string, stderr: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'TmuxError';
    this.stderr = stderr;
  }
}

export const DEFAULT_SESSION = 'dispatch';

/** How long a single tmux call may take before it is killed. */
const TMUX_TIMEOUT_MS = 30_000;

/** stderr of a tmux client that found no server (none started, or it just exited). */
const NO_SERVER = /no server running|error connecting to|server exited unexpectedly/i;
/** stderr of a command whose session vanished (or whose server did) between two calls. */
const SESSION_GONE = /can't find session|no server running|error connecting to|server exited/i;

/** Window names remembered before the session's are listed again (see `openSession`). */
const MAX_REMEMBERED_NAMES = 4096;

/**
 * How long a window waits on its placeholder for the agent: a daemon that died between opening
 * the window and starting the agent in it leaves an empty window for this long, no longer.
 */
const PLACEHOLDER_SECONDS = 60;

const PANE_ID = /^%\d+$/;
const NAME = /^[A-Za-z0-9._-]+$/;

const execFileAsync = promisify(execFile);

const defaultExec: ExecFn = async (file, args, options) => {
  const { stdout, stderr } = await execFileAsync(file, [...args], {
    env: options.env,
    encoding: 'utf8',
    timeout: TMUX_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  return { stdout, stderr };
};

/** `['-L', socket, ...args]`, or just `args` for the default server. */
export function tmuxArgs(socket: string | undefined, ...args: string[]): string[] {
  return socket === undefined ? args : ['-L', socket, ...args];
}

/** The environment tmux runs with: the given one without `TMUX` and `TMUX_PANE`. */
export function tmuxEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const key of DROPPED_ENV_KEYS) delete env[key];
  return env;
}

/**
 * An argument the tmux client passes on unchanged. The client ends a command at an argument that
 * ends in `;` (and drops the `;`); `\;` at the end stands for a literal `;`.
 */
export function escapeTmuxArgument(arg: string): string {
  return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}

/** Text that tmux format expansion leaves unchanged: `#` is written `##`. */
export function escapeTmuxFormat(text: string): string {
  return text.replaceAll('#', '##');
}

/** Whether a `tmux` binary can be run. */
export async function isTmuxAvailable(): Promise<boolean> {
  try {
    await defaultExec('tmux', ['-V'], { env: tmuxEnv() });
    return true;
  } catch {
    return false;
  }
}

export class TmuxRunner implements Runner {
  readonly kind = 'tmux' as const;
  readonly socket: string | undefined;
  readonly session: string;
  private readonly exec: ExecFn;
  /**
   * Resolves once the session exists and its window names are known; later launches do not ask
   * tmux again (null: ask at the next launch). Launches run at the same time, each with one tmux
   * call: listing the windows at every launch, and one launch at a time, halved the rate.
   */
  private sessionReady: Promise<void> | null = null;
  /** Names of the session's windows when it was seen, and of every window this runner opened. */
  private readonly windowNames = new Set<string>();

  constructor(options: TmuxRunnerOptions = {}) {
    const { socket, session = DEFAULT_SESSION, exec = defaultExec } = options;
    if (socket !== undefined && (!NAME.test(socket) || socket === '.' || socket === '..')) {
      throw new EngineError(
        `invalid tmux socket name ${JSON.stringify(socket)}: use letters, digits, '.', '_' and '-'`,
      );
    }
    if (!NAME.test(session) || session.includes('.')) {
      throw new EngineError(
        `invalid tmux session name ${JSON.stringify(session)}: use letters, digits, '_' and '-'`,
      );
    }
    this.socket = socket;
    this.session = session;
    this.exec = exec;
  }

  async launch(spec: AgentLaunch): Promise<LaunchedAgent> {
    const checked = await checkLaunch(spec);
    for (let attempt = 1; ; attempt++) {
      const ready = (this.sessionReady ??= this.openSession());
      try {
        await ready;
        return await this.newWindow(checked);
      } catch (error) {
        if (this.sessionReady === ready) this.sessionReady = null;
        // The session (or server) went away since it was seen, e.g. a human closed its last
        // window. Create it again, once.
        if (attempt < 2 && error instanceof TmuxError && SESSION_GONE.test(error.stderr)) continue;
        throw error;
      }
    }
  }

  async isTargetAlive(target: string): Promise<boolean> {
    assertPaneId(target);
    const panes = await this.listPanes();
    const dead = panes.get(target);
    return dead !== undefined && dead !== '1';
  }

  async typeInto(
    target: string,
    input: readonly TerminalInput[],
    mayType?: () => Promise<boolean>,
  ): Promise<boolean> {
    assertPaneId(target);
    for (const [i, entry] of input.entries()) {
      if (i > 0) await sleep(TYPING_PAUSE_MS);
      if (!(await this.listPanes()).has(target)) return false;
      if (mayType && !(await mayType())) return false;
      // Repeats go in one call, together: a double press (Claude Code exits on two Ctrl-C within
      // a second) is never split by the pause.
      const keys = Array.from({ length: entry.repeat ?? 1 }, () => entry.key);
      await this.tmux('send-keys', '-t', target, ...keys);
    }
    return true;
  }

  async viewers(target: string): Promise<number> {
    assertPaneId(target);
    if (!(await this.listPanes()).has(target)) return 0;
    const count = await this.tmux(
      'display-message',
      '-p',
      '-t',
      target,
      '#{window_active_clients}',
    );
    return Number.parseInt(count.trim(), 10) || 0;
  }

  async stop(target: string): Promise<void> {
    assertPaneId(target);
    try {
      await this.tmux('kill-window', '-t', target);
    } catch (error) {
      // Gone already (or the whole server is): nothing to stop. Anything else is a real failure.
      if (error instanceof TmuxError && !(await this.listPanes()).has(target)) return;
      throw error;
    }
  }

  /** Nothing to release: the server and its windows outlive the runner on purpose. */
  async close(): Promise<void> {}

  /** Creates the session, detached, unless it exists. Safe when another process does the same. */
  async ensureSession(): Promise<void> {
    try {
      await this.tmux('has-session', '-t', `=${this.session}`);
      return;
    } catch (error) {
      if (!(error instanceof TmuxError)) throw error;
    }
    try {
      // -f /dev/null: this call may start the server, which must not read the user's tmux.conf.
      await this.tmux(
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        '-s',
        this.session,
        '-x',
        String(AGENT_TERMINAL.cols),
        '-y',
        String(AGENT_TERMINAL.rows),
      );
    } catch (error) {
      // Someone else created it between our two calls: it exists, which is all we need.
      if (error instanceof TmuxError && /duplicate session/i.test(error.stderr)) return;
      throw error;
    }
  }

  /** Makes sure the session exists and learns its window names. */
  private async openSession(): Promise<void> {
    await this.ensureSession();
    const names = await this.tmux('list-windows', '-t', `=${this.session}`, '-F', '#{window_name}');
    // Forgets the names of windows long closed, too: the set does not grow without bound.
    this.windowNames.clear();
    for (const name of names.split('\n')) if (name !== '') this.windowNames.add(name);
  }

  private async newWindow(spec: CheckedLaunch): Promise<LaunchedAgent> {
    // Named before the first await: launches running at the same time never pick the same name.
    const windowName = uniqueWindowName(sanitizeWindowName(spec.name), this.windowNames);
    this.windowNames.add(windowName);
    if (this.windowNames.size >= MAX_REMEMBERED_NAMES) this.sessionReady = null;
    const envFile = await writeEnvFile(agentEnv(spec.env));
    try {
      return await this.startIn(spec, windowName, envLoaderArgv(envFile, spec.argv));
    } catch (error) {
      // The loader deletes the file once it runs; a launch that failed may never run it.
      await rm(envFile, { force: true });
      throw error;
    }
  }

  /** Opens the window and runs `argv` in it, its output piped to the log file first. */
  private async startIn(
    spec: CheckedLaunch,
    windowName: string,
    argv: string[],
  ): Promise<LaunchedAgent> {
    const where = ['-c', escapeTmuxArgument(escapeTmuxFormat(spec.cwd)), '--'];
    const command = argv.map(escapeTmuxArgument);
    const opened = await this.tooLong(() =>
      spec.logFile === undefined
        ? this.openWindow(windowName, [...where, ...command])
        : this.openWindow(windowName, ['--', 'sleep', String(PLACEHOLDER_SECONDS)]),
    );
    if (spec.logFile === undefined) return { ...opened, windowName };
    const pane = opened.target;
    const pipe = `exec cat >> ${shellQuote(resolve(spec.logFile))}`;
    // On failure the window is left alone: its placeholder ends by itself, and if the agent did
    // start, the daemon finds it by its start token and watches it.
    const stdout = await this.tooLong(() =>
      this.tmux(
        ...['pipe-pane', '-o', '-t', pane, escapeTmuxArgument(escapeTmuxFormat(pipe)), ';'],
        ...['respawn-pane', '-k', '-t', pane, ...where, ...command, ';'],
        ...['display-message', '-p', '-t', pane, '#{pane_pid}'],
      ),
    );
    const pid = /^(\d+)$/.exec(stdout.trim())?.[1];
    if (pid === undefined) {
      throw new EngineError(
        `tmux display-message printed ${JSON.stringify(stdout)}, expected a pid`,
      );
    }
    return { kind: 'tmux', target: pane, windowName, pid: Number(pid) };
  }

  /** A new window in the session running `command` (`-c`, `--` and the argv). */
  private async openWindow(
    windowName: string,
    command: string[],
  ): Promise<{ kind: 'tmux'; target: string; pid: number }> {
    const stdout = await this.tmux(
      'new-window',
      '-d',
      '-P',
      '-F',
      '#{pane_pid} #{pane_id}',
      '-t',
      `=${this.session}:`,
      '-n',
      windowName,
      ...command,
    );
    const match = /^(\d+) (%\d+)$/.exec(stdout.trim());
    if (!match?.[1] || !match[2]) {
      throw new EngineError(
        `tmux new-window printed ${JSON.stringify(stdout)}, expected a pid and pane id`,
      );
    }
    return { kind: 'tmux', target: match[2], pid: Number(match[1]) };
  }

  /** Runs a tmux call, saying what to do when its command is longer than tmux takes. */
  private async tooLong<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof TmuxError && /command too long/i.test(error.stderr)) {
        throw new EngineError(
          'cannot start the agent in tmux: its command exceeds the ~16 KB a tmux command may ' +
            'carry; shorten it or use --runner pty',
          { cause: error },
        );
      }
      throw error;
    }
  }

  /** Pane id → `pane_dead` ('1' or '0') for every pane of the server; empty without a server. */
  private async listPanes(): Promise<Map<string, string>> {
    let stdout: string;
    try {
      stdout = await this.tmux('list-panes', '-a', '-F', '#{pane_id} #{pane_dead}');
    } catch (error) {
      if (error instanceof TmuxError && NO_SERVER.test(error.stderr)) return new Map();
      throw error;
    }
    const panes = new Map<string, string>();
    for (const line of stdout.split('\n')) {
      const [id, dead] = line.trim().split(' ');
      if (id && dead !== undefined) panes.set(id, dead);
    }
    return panes;
  }

  /** Runs one tmux command on this runner's server; resolves with stdout, throws TmuxError. */
  private async tmux(...args: string[]): Promise<string> {
    try {
      return (await this.exec('tmux', tmuxArgs(this.socket, ...args), { env: tmuxEnv() })).stdout;
    } catch (error) {
      if (isErrnoException(error) && error.code === 'ENOENT') {
        throw new EngineError(
          'tmux is not installed (or not on PATH): install it or use --runner pty',
          {
            cause: error,
          },
        );
      }
      const stderr = stderrOf(error);
      const command = args.find((arg) => !arg.startsWith('-') && arg !== '/dev/null') ?? 'tmux';
      throw new TmuxError(
        `tmux ${command} failed: ${stderr.trim() || (error instanceof Error ? error.message : String(error))}`,
        stderr,
        error,
      );
    }
  }
}

function assertPaneId(target: string): void {
  if (!PANE_ID.test(target)) {
    throw new EngineError(`not a tmux pane id: ${JSON.stringify(target)} (expected %N)`);
  }
}

function stderrOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'stderr' in error) {
    const { stderr } = error as { stderr: unknown };
    if (typeof stderr === 'string') return stderr;
    if (Buffer.isBuffer(stderr)) return stderr.toString('utf8');
  }
  return '';
}
