/**
 * Benchmark 3: throughput. 500 files get `#delegated-bench` at once (written back to back) on a
 * ready daemon with no cap (`--max-agents 0`) and the trivial agent. Measured from the first
 * write: when every item was claimed and spawned (the daemon's event log: `claimed`, `spawned`)
 * and done (each file's mtime once it shows `#done-bench`, written by the agent's swap). The
 * daemon's CPU and peak memory over the run are read from /proc.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { cpuSeconds, memoryMb, round, sleep, log } from './lib.mjs';
import { relPath } from './gen-tree.mjs';
import { delegate } from './latency.mjs';

function readEvents(tree) {
  const path = join(tree.dir, 'sessions', '.engine', 'events.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

function tmuxWindowCount(socket) {
  try {
    return execFileSync('tmux', ['-L', socket, 'list-windows', '-a', '-F', '#{window_id}'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
}

export async function benchThroughput(tree, daemon, { files, debounceMs, timeoutMs }) {
  const paths = files.map((i) => join(tree.sessions, relPath(i)));
  const real = new Set(paths.map((p) => realpathSync(p)));
  const cpu0 = cpuSeconds(daemon.pid);
  let peakRss = memoryMb(daemon.pid)?.rss ?? null;
  let peakWindows = 0;
  const t0 = Date.now();
  for (const path of paths) delegate(path);
  const writtenMs = Date.now() - t0;
  log(`throughput: ${paths.length} files delegated in ${writtenMs} ms`);

  const doneAt = new Map();
  const deadline = t0 + timeoutMs;
  let lastReport = 0;
  while (doneAt.size < paths.length && Date.now() < deadline) {
    await sleep(250);
    for (const path of paths) {
      if (doneAt.has(path)) continue;
      let text;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      if (text.includes('#done-bench')) doneAt.set(path, statSync(path).mtimeMs);
    }
    const rss = memoryMb(daemon.pid)?.rss;
    if (rss && rss > peakRss) peakRss = rss;
    if (Date.now() - lastReport > 2000) {
      peakWindows = Math.max(peakWindows, tmuxWindowCount(daemon.socket) - 1);
      lastReport = Date.now();
      log(
        `throughput: ${doneAt.size}/${paths.length} done after ${round((Date.now() - t0) / 1000, 1)} s`,
      );
    }
  }
  const cpu = cpuSeconds(daemon.pid) - cpu0;
  // Let the wrappers exit (their windows close) and the daemon notice the last done.
  const windowsDeadline = Date.now() + 60_000;
  while (tmuxWindowCount(daemon.socket) > 1 && Date.now() < windowsDeadline) await sleep(250);
  await sleep(1500);
  const events = readEvents(tree).filter(
    (e) => real.has(e.file) && Date.parse(e.time) >= t0 - 1000,
  );
  const times = (name) =>
    events
      .filter((e) => e.event === name)
      .map((e) => Date.parse(e.time) - t0)
      .sort((a, b) => a - b);
  const claimed = times('claimed');
  const spawned = times('spawned');
  const done = [...doneAt.values()].map((t) => t - t0).sort((a, b) => a - b);
  const noticed = times('done');
  const span = (list) => (list.length > 1 ? list.at(-1) - list[0] : null);
  const rate = (list) => (span(list) ? round((list.length - 1) / (span(list) / 1000), 1) : null);
  return {
    items: paths.length,
    debounceMs,
    writeMs: writtenMs,
    claimed: claimed.length,
    spawned: spawned.length,
    done: done.length,
    firstClaimMs: claimed[0] ?? null,
    allClaimedMs: claimed.length === paths.length ? claimed.at(-1) : null,
    allSpawnedMs: spawned.length === paths.length ? spawned.at(-1) : null,
    allDoneMs: done.length === paths.length ? round(done.at(-1)) : null,
    daemonSawAllDoneMs: noticed.length === paths.length ? noticed.at(-1) : null,
    claimsPerSecond: rate(claimed),
    spawnsPerSecond: rate(spawned),
    donePerSecond: rate(done),
    itemsPerSecondOverall: done.length ? round(done.length / (done.at(-1) / 1000), 1) : null,
    daemonCpuSeconds: round(cpu, 1),
    daemonPeakRssMb: round(peakRss),
    peakAgentWindows: peakWindows,
    timedOut: done.length < paths.length,
  };
}
