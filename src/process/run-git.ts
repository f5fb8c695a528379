/**
 * git, run as a program (never through a shell) in a given directory: the one way engine runs
 * git, for worktrees and for the claim refs of many hosts.
 */
import { execFile, spawn } from 'node:child_process';
import { EngineError } from '../errors.js';

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitOptions {
  /** Extra environment for this run (merged over the process's own). */
  env?: Record<string, string>;
  /** Given to git on its standard input. */
  input?: string;
  /**
   * A deadline: git and every process it started (ssh, a remote helper) are killed at it, and
   * the run fails with code 124. git runs in a session of its own, with no terminal to ask on.
   */
  deadlineMs?: number;
}

/** How long a fetch, push or ls-remote may take before its remote counts as unreachable. */
export const NETWORK_DEADLINE_MS = 30_000;

/**
 * The options of a git run that talks to a remote: a deadline (a server that accepts and never
 * answers must not hang a command), and no credential prompt (no terminal, no askpass program:
 * engine runs unattended; a remote needing a password fails, and the caller says so).
 */
export function networkOptions(deadlineMs = NETWORK_DEADLINE_MS): GitOptions {
  return {
    deadlineMs,
    env: { GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never', SSH_ASKPASS_REQUIRE: 'never' },
  };
}

export function runGit(cwd: string, args: string[], options: GitOptions = {}): Promise<GitRun> {
  const { deadlineMs } = options;
  return new Promise((resolve) => {
    const child = spawn('git', ['-C', cwd, ...args], {
      detached: deadlineMs !== undefined,
      ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            // The whole group: a remote helper or ssh holding the pipes would keep them open.
            if (child.pid !== undefined) killGroup(child.pid);
          }, deadlineMs);
    const done = (code: number, extra: string) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: stderr ? (extra ? `${stderr}\n${extra}` : stderr) : extra });
    };
    child.once('error', (error) => done(127, error.message));
    child.once('close', (code) => {
      if (timedOut) done(124, `no answer within ${deadlineMs! / 1000} s (git ${args[0]} stopped)`);
      else done(code ?? 128, '');
    });
    // git may exit before it reads its input (a failed command): its exit code says so.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input);
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** git's stdout as bytes (a blob need not be UTF-8); null when git failed. */
export function gitBytes(cwd: string, args: string[]): Promise<Buffer | null> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-C', cwd, ...args],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => resolve(error ? null : stdout),
    ).stdin?.end();
  });
}

/** git's stdout, or an EngineError naming the command and git's message. */
export async function gitOk(
  cwd: string,
  args: string[],
  options: GitOptions = {},
): Promise<string> {
  const run = await runGit(cwd, args, options);
  if (run.code !== 0)
    throw new EngineError(`git ${args.join(' ')} failed in ${cwd}: ${oneLine(run.stderr)}`);
  return run.stdout;
}

const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `work` after any other serialized work on the same key (a repository): two fetches into
 * one clone at once fail on each other's ref locks.
 */
export function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const next = (queues.get(key) ?? Promise.resolve()).then(work, work);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return next;
}

/** The top directory of the clone `dir` is in; null when it is in none. */
export async function cloneTop(dir: string): Promise<string | null> {
  const run = await runGit(dir, ['rev-parse', '--show-toplevel']);
  return run.code === 0 ? run.stdout.trim() : null;
}

/** git's message on one line: it may end a claim as the Reason of a Recovery entry. */
export function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, '; ');
}
