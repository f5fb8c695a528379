/**
 * Shared helpers for the benchmarks: paths, a seeded PRNG, statistics, /proc readings, and a
 * registry of everything started (processes by pid, tmux servers by socket, temporary trees) so
 * that every exit path cleans up.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const ENGINE = join(REPO, 'dist', 'cli', 'main.cjs');
export const NODE = process.execPath;
export const CLOCK_TICKS = Number(
  (() => {
    try {
      return execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim();
    } catch {
      return '100';
    }
  })(),
);
export const PAGE_SIZE = 4096;

/** mulberry32: a small, fast, seeded PRNG (same sequence on every machine). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = (rand, list) => list[Math.floor(rand() * list.length)];

export function median(values) {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values, p) {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[Math.min(s.length, rank) - 1];
}

export const round = (value, digits = 0) =>
  value === null || value === undefined || Number.isNaN(value)
    ? null
    : Math.round(value * 10 ** digits) / 10 ** digits;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a truthy value; throws after `timeoutMs`. */
export async function waitFor(
  check,
  { timeoutMs = 60_000, intervalMs = 50, what = 'condition' } = {},
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** utime + stime of a process (all its threads), in seconds; null when it is gone. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** VmRSS and VmHWM of a process in MB; null when it is gone. */
export function memoryMb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** inotify watches held by one process (sum over its inotify descriptors). */
export function inotifyWatches(pid) {
  let count = 0;
  let fds;
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue;
      const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
      count += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
    } catch {
      // the descriptor closed meanwhile
    }
  }
  return count;
}

/** inotify watches in use by every process we can see (our uid shares one limit). */
export function inotifyWatchesInUse() {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (/^\d+$/.test(pid)) total += inotifyWatches(Number(pid)) ?? 0;
  }
  return total;
}

export function maxUserWatches() {
  try {
    return Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim());
  } catch {
    return Infinity;
  }
}

// ---------------------------------------------------------------------------------------------
// Clean-up registry: processes by pid, tmux servers by socket, trees by path.

const started = { pids: new Set(), sockets: new Set(), dirs: new Set() };

export function registerPid(pid) {
  started.pids.add(pid);
}
export function forgetPid(pid) {
  started.pids.delete(pid);
}
export function registerSocket(socket) {
  started.sockets.add(socket);
}
export function registerDir(dir) {
  started.dirs.add(dir);
}

export function killTmuxServer(socket) {
  try {
    execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // no server was started on this socket
  }
  const uid = process.getuid?.() ?? 0;
  rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${uid}`, socket), { force: true });
  started.sockets.delete(socket);
}

/** Kills every process we started (by pid), every tmux server (by socket), deletes every tree. */
export function cleanupAll({ keepDirs = false } = {}) {
  for (const pid of started.pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  started.pids.clear();
  for (const socket of [...started.sockets]) killTmuxServer(socket);
  if (!keepDirs) {
    for (const dir of started.dirs) rmSync(dir, { recursive: true, force: true });
    started.dirs.clear();
  }
}

export function installCleanupHandlers() {
  const onSignal = (signal) => {
    process.stderr.write(`\nbench: ${signal}, cleaning up\n`);
    cleanupAll();
    process.exit(130);
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('exit', () => cleanupAll({ keepDirs: process.env.BENCH_KEEP_TREES === '1' }));
}

/** A scratch directory for one bench run, under the OS temp dir. */
export function benchTmp() {
  return join(tmpdir(), `engine-bench-${process.pid}`);
}

/**
 * Runs a command to completion and measures its wall time (ms) and, where /usr/bin/time exists,
 * its CPU time (user + system, children included).
 */
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

export function timedRun(file, args, { cwd, env } = {}) {
  const argv = TIME ? [TIME, ['-f', '\u0001%U %S', file, ...args]] : [file, args];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(argv[0], argv[1], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    registerPid(child.pid);
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      forgetPid(child.pid);
      let stderr = Buffer.concat(err).toString('utf8');
      let cpuMs = null;
      if (TIME) {
        const at = stderr.lastIndexOf('\u0001');
        if (at >= 0) {
          const [user, sys] = stderr
            .slice(at + 1)
            .trim()
            .split(' ')
            .map(Number);
          cpuMs = (user + sys) * 1000;
          stderr = stderr.slice(0, at);
        }
      }
      resolve({ code, wallMs, cpuMs, stdout: Buffer.concat(out).toString('utf8'), stderr });
    });
  });
}

export function log(line) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/**
 * Times each command `runs` times, rotating the order each round. `runOne(name)` runs one and
 * gives its timedRun result and its score (or null); a non-zero exit fails the bench. Gives each
 * tool's runs, wall time (median, min, max), CPU median, ratio to `rg`'s median wall, and the
 * first run's score with whether every run scored the same.
 */
export async function timeRounds(label, names, runs, runOne) {
  const samples = Object.fromEntries(names.map((n) => [n, { wall: [], cpu: [], scores: [] }]));
  for (let r = 0; r < runs; r++) {
    for (const name of names.map((_, i) => names[(i + r) % names.length])) {
      const { run, score } = await runOne(name);
      if (run.code !== 0)
        throw new Error(`${name} exited ${run.code}: ${run.stderr.slice(0, 500)}`);
      samples[name].wall.push(run.wallMs);
      if (run.cpuMs !== null) samples[name].cpu.push(run.cpuMs);
      if (score) samples[name].scores.push(score);
    }
    const last = names.map((n) => `${n} ${round(samples[n].wall.at(-1))} ms`);
    log(`${label}: round ${r + 1}/${runs}: ${last.join(', ')}`);
  }
  const rg = median(samples.rg.wall);
  return Object.fromEntries(names.map((name) => [name, toolResult(samples[name], rg)]));
}

function toolResult({ wall, cpu, scores }, rgMedian) {
  return {
    runs: wall.length,
    wallMs: {
      median: round(median(wall)),
      min: round(Math.min(...wall)),
      max: round(Math.max(...wall)),
    },
    cpuMs: cpu.length ? { median: round(median(cpu)) } : null,
    ratioToRg: round(median(wall) / rgMedian, 2),
    ...(scores[0] ?? {}),
    ...(scores.length
      ? { sameResultEveryRun: scores.every((x) => JSON.stringify(x) === JSON.stringify(scores[0])) }
      : {}),
  };
}
