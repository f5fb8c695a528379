/**
 * git, run with `execFile` (never through a shell) in a given directory: the one way engine runs
 * git, for worktrees and for the claim refs of many hosts.
 */
import { execFile } from 'node:child_process';
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
}

export function runGit(cwd: string, args: string[], options: GitOptions = {}): Promise<GitRun> {
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      ['-C', cwd, ...args],
      {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0;
        resolve({ code, stdout, stderr: stderr || (error && code === 127 ? error.message : '') });
      },
    );
    // git may exit before it reads its input (a failed command): its exit code says so.
    child.stdin?.on('error', () => undefined);
    if (options.input === undefined) child.stdin?.end();
    else child.stdin?.end(options.input);
  });
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
