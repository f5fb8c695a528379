/** Shared pieces for the CLI and file tests: a fresh temporary directory and the built binary. */
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';

export interface TempDir {
  dir: string;
  /** `dir` joined with `name`. */
  path(...names: string[]): string;
  cleanup(): Promise<void>;
}

export async function makeTempDir(prefix = 'engine-cli-'): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return {
    dir,
    path: (...names) => join(dir, ...names),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs `engine <args>` in `cwd` (the temporary directory unless told otherwise). */
export function engine(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  return runCli(args, { cwd, env: { ...process.env, ...env } });
}

export function expectSuccess(result: CliResult, stdout = ''): void {
  expect({ code: result.code, stderr: result.stderr, stdout: result.stdout }).toEqual({
    code: 0,
    stderr: '',
    stdout,
  });
}

/** Exit 1, nothing on stdout, exactly `ERROR: <message>` on stderr. */
export function expectError(result: CliResult, message: string | RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
  if (typeof message === 'string') expect(result.stderr).toBe(`ERROR: ${message}\n`);
  else {
    expect(result.stderr).toMatch(/^ERROR: [^\n]*\n$/);
    expect(result.stderr).toMatch(message);
  }
}

/** Files an edit may leave behind by mistake: temporary files and lock directories. */
export async function leftovers(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((n) => n.endsWith('.tmp') || n.endsWith('.engine-lock'));
}

export interface Snapshot {
  bytes: Buffer;
  ino: bigint;
  mode: number;
}

export async function snapshot(path: string): Promise<Snapshot> {
  const info = await lstat(path, { bigint: true });
  return { bytes: await readFile(path), ino: info.ino, mode: Number(info.mode & 0o7777n) };
}

/** The file was not written at all: same bytes, same inode (no rename happened). */
export async function expectUntouched(path: string, before: Snapshot): Promise<void> {
  const after = await snapshot(path);
  expect(after.bytes.toString('latin1')).toBe(before.bytes.toString('latin1'));
  expect(after.ino).toBe(before.ino);
}
