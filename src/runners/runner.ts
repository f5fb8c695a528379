/**
 * Where agents run. A runner starts one agent command, reports whether it still runs and stops it.
 * Two kinds: tmux (default; a human can attach to the window) and pty (node-pty inside the daemon).
 *
 * The argument vector is never handed to a shell: file names such as `$(touch x).md`,
 * `a; rm -rf b.md`, names with quotes, newlines or leading dashes are plain arguments.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { EngineError, isErrnoException } from '../errors.js';

export interface AgentLaunch {
  /** Window name base, e.g. 'agent-implementation-1732260000'; the runner adds a suffix (-2, -3, ...) on collision. */
  name: string;
  /** The argument vector to execute. NEVER passed through a shell: file names such as `$(touch x).md`, `a; rm -rf b.md`, names with quotes, newlines or leading dashes are just arguments. */
  argv: string[];
  cwd: string;
  /**
   * The agent's whole environment: it inherits nothing else (not the tmux server's), except the
   * variables its own terminal and shell set (`TERMINAL_ENV_KEYS`, never taken from here). A name
   * that is not a shell variable name is left out.
   */
  env: Record<string, string>;
  /** Where the agent's terminal output is appended (tmux: `pipe-pane`, set before it starts; pty: what node-pty reads). */
  logFile?: string;
}

export interface LaunchedAgent {
  kind: 'tmux' | 'pty';
  target: string;
  windowName: string;
  pid: number;
}

/**
 * One input to an agent's terminal: a key (named as tmux names it), `repeat` times (default 1),
 * sent together. Only keys that answer no question: engine must never approve what an agent asks a
 * human. Claude Code 2.1.330 at a permission prompt (measured) takes Enter, and a digit, as a
 * choice ("1. Yes" is the default), Escape as "No", and ignores Ctrl-C; so Ctrl-C is the only key.
 */
export type TerminalInput = { key: 'C-c'; repeat?: number };

/**
 * Pause between two inputs typed into a terminal, so that each reaches the program in a read of
 * its own (a full-screen program may take keys read together for a paste).
 */
export const TYPING_PAUSE_MS = 300;

/**
 * The size of an agent's terminal as a runner makes it (a tmux window is resized while a human
 * attaches): `engine logs` renders the transcript at this size (src/transcript/).
 */
export const AGENT_TERMINAL = { cols: 200, rows: 50 } as const;

export interface Runner {
  readonly kind: 'tmux' | 'pty';
  launch(spec: AgentLaunch): Promise<LaunchedAgent>;
  /** True while the target's process has not exited (tmux: pane exists and is not dead). */
  isTargetAlive(target: string): Promise<boolean>;
  /**
   * Types `input` into the target's terminal, in order, each only once `mayType` (when given)
   * says yes right before it; false when it said no, or the target is gone. Only tmux has it: a
   * pty agent's terminal is not named in its session's record.
   */
  typeInto?(
    target: string,
    input: readonly TerminalInput[],
    mayType?: () => Promise<boolean>,
  ): Promise<boolean>;
  /**
   * How many terminals show the target's window now (a human attached to it, reading or typing);
   * 0 when the target is gone. Only tmux has it.
   */
  viewers?(target: string): Promise<number>;
  /** Ends the target if still there (tmux: kill-window -t <pane id>); ignores a target that is gone. */
  stop(target: string): Promise<void>;
  /** Releases runner resources (pty: nothing left running is killed — document; tmux: nothing). */
  close(): Promise<void>;
}

/** Variables a runner never passes on: they would point the agent at the daemon's own tmux client. */
export const DROPPED_ENV_KEYS: readonly string[] = ['TMUX', 'TMUX_PANE'];

/**
 * Variables that describe a process's own terminal and directory. The agent gets them from its
 * terminal (tmux, node-pty) and its shell, never from the daemon, whose terminal they describe.
 */
export const TERMINAL_ENV_KEYS: readonly string[] = [
  ...DROPPED_ENV_KEYS,
  'TERM',
  'TERM_PROGRAM',
  'TERM_PROGRAM_VERSION',
  'TERMCAP',
  'COLUMNS',
  'LINES',
  'STY',
  'WINDOW',
  'WINDOWID',
  'PWD',
  'OLDPWD',
];

/** A name a POSIX shell can set: only such names can be handed to an agent (see `agentEnv`). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Longest window name kept (tmux accepts more; longer names only clutter the status line). */
const MAX_WINDOW_NAME = 100;

/**
 * A window name made of `[A-Za-z0-9._-]` only: every other character is removed (so nothing in it
 * can be read as a tmux format, target or option). An empty result becomes `agent`.
 */
export function sanitizeWindowName(name: string): string {
  const kept = name.replace(/[^A-Za-z0-9._-]/g, '').slice(0, MAX_WINDOW_NAME);
  return kept === '' ? 'agent' : kept;
}

/** `base`, else `base-2`, `base-3`, ... : the first that is not in `taken`. */
export function uniqueWindowName(base: string, taken: Iterable<string>): string {
  const names = taken instanceof Set ? (taken as ReadonlySet<string>) : new Set(taken);
  if (!names.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!names.has(candidate)) return candidate;
  }
}

/** A launch whose argv, cwd and env have been checked; `cwd` is absolute. */
export interface CheckedLaunch extends AgentLaunch {
  argv: [string, ...string[]];
}

/**
 * Checks a launch before anything is started: a non-empty argv with a non-empty program, no NUL
 * bytes in it or in an environment value, and a cwd that is an existing directory. Throws
 * `EngineError` naming the problem.
 */
export async function checkLaunch(spec: AgentLaunch): Promise<CheckedLaunch> {
  const [program, ...rest] = spec.argv;
  if (program === undefined || program === '') {
    throw new EngineError('cannot start an agent: the command is empty');
  }
  for (const arg of spec.argv) {
    if (arg.includes('\0')) {
      throw new EngineError(
        `cannot start an agent: argument contains a NUL byte: ${JSON.stringify(arg)}`,
      );
    }
  }
  for (const [key, value] of Object.entries(spec.env)) {
    if (value.includes('\0')) {
      throw new EngineError(
        `cannot start an agent: the environment variable ${JSON.stringify(key)} contains a NUL byte`,
      );
    }
  }
  const cwd = path.resolve(spec.cwd);
  try {
    const info = await stat(cwd);
    if (!info.isDirectory())
      throw new EngineError(`cannot start an agent: ${cwd} is not a directory`);
  } catch (error) {
    if (error instanceof EngineError) throw error;
    const reason = isErrnoException(error) ? error.code : String(error);
    throw new EngineError(`cannot start an agent in ${cwd}: ${reason}`, { cause: error });
  }
  return { ...spec, argv: [program, ...rest], cwd };
}

/** A word the POSIX shell reads back as exactly `value`: single-quoted, a `'` as `'\''`. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The environment an agent is started with: the launch's, without `TERMINAL_ENV_KEYS` and without
 * names that are not shell variable names (no shell could hand them on; bash's exported functions,
 * `BASH_FUNC_f%%`, are such names).
 */
export function agentEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (ENV_NAME.test(key) && !TERMINAL_ENV_KEYS.includes(key)) out[key] = value;
  }
  return out;
}

/** A process environment as a record of the variables that are set. */
export function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}
