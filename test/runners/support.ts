/**
 * Test support for the runners: isolated tmux servers (`tmux -L engine-test-<random>`, never the
 * default server), a probe agent that reports what it received, and process checks by pid.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export function testSocketName(): string {
  return `engine-test-${randomBytes(6).toString('hex')}`;
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

/** Runs tmux on the given isolated server only (always with -L). */
export async function tmux(socket: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('tmux', ['-L', socket, ...args], {
    env: cleanEnv(),
    encoding: 'utf8',
  });
  return stdout;
}

/** Like `tmux`, but resolves with the exit status and stderr instead of throwing. */
export async function tmuxStatus(
  socket: string,
  ...args: string[]
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    return { ok: true, stdout: await tmux(socket, ...args), stderr: '' };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, stdout, stderr };
  }
}

/**
 * Kills the isolated server and deletes its socket file (kill-server leaves it behind), and the
 * `.lock` file a client leaves when two clients raced to start the server.
 */
export async function destroyServer(socket: string): Promise<void> {
  await tmuxStatus(socket, 'kill-server');
  rmSync(socketFile(socket), { force: true });
  rmSync(`${socketFile(socket)}.lock`, { force: true });
}

export function socketFile(socket: string): string {
  const uid = process.getuid?.() ?? 0;
  return join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${uid}`, socket);
}

/**
 * What the probe agent writes to `$PROBE_OUT` (atomically): its arguments, cwd, pid and the
 * environment variables named in `$PROBE_ENV` (comma-separated; `*`: all of them).
 */
export interface ProbeReport {
  argv: string[];
  cwd: string;
  pid: number;
  env: Record<string, string | null>;
}

/**
 * The probe agent. Behaviour after reporting: with `$PROBE_HOLD` set, runs until that file exists
 * and then exits; with `$PROBE_FOREVER` set, runs until killed; otherwise exits at once. It prints
 * `probe says hello` to its terminal first.
 */
export function writeProbeAgent(dir: string): string {
  const file = join(dir, 'probe-agent.cjs');
  writeFileSync(
    file,
    `#!${process.execPath}
const fs = require('node:fs');
process.stdout.write('probe says hello\\n');
const names = process.env.PROBE_ENV === '*' ? Object.keys(process.env) : (process.env.PROBE_ENV || '').split(',').filter(Boolean);
const env = {};
for (const name of names) env[name] = process.env[name] ?? null;
const report = { argv: process.argv.slice(2), cwd: process.cwd(), pid: process.pid, env };
const out = process.env.PROBE_OUT;
fs.writeFileSync(out + '.tmp', JSON.stringify(report));
fs.renameSync(out + '.tmp', out);
if (process.env.PROBE_HOLD) {
  const timer = setInterval(() => { if (fs.existsSync(process.env.PROBE_HOLD)) { clearInterval(timer); } }, 20);
} else if (process.env.PROBE_FOREVER) {
  setInterval(() => {}, 1000);
}
`,
  );
  chmodSync(file, 0o755);
  return file;
}

export function readProbe(file: string): ProbeReport | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ProbeReport;
  } catch {
    return null;
  }
}

/** True when no process runs under `pid`: no /proc entry, or an exited one (zombie, state Z/X). */
export function processGone(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

/** Best-effort SIGKILL of every pid still running (cleanup after a failed test). */
export function killAll(pids: Iterable<number>): void {
  for (const pid of pids) {
    if (processGone(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
