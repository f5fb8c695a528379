/**
 * Benchmark 4: footprint. A daemon with the default timings (debounce 3 s, reconcile every 60 s,
 * reap every 30 s) and the given watch backend (`--watcher`) on the tree, measured in three
 * phases, each apart:
 *
 *   start-up  time from spawn to ready (its `monitoring` line), CPU, resident memory (VmRSS) and
 *             inotify watches at ready;
 *   warm-up   from ready until it serves answers: its tag index built and its status warm (its
 *             log says `status warmed`; not chokidar's: it keeps no index), CPU and RSS;
 *   idle      CPU (utime + stime of all its threads, from /proc/<pid>/stat) over a window that
 *             starts `settleS` after the warm-up, RSS at its end and the peak (VmHWM).
 *
 * The periodic reconcile pass runs every 60 s after ready: a directory pass, and every fifth
 * (300 s) a full one. The default window (BENCH_IDLE_S=300) holds five of them, one full: the
 * figure is the long-run idle average.
 */
import { cpuSeconds, inotifyWatches, memoryMb, round, sleep, waitFor } from './lib.mjs';

/** How long the warm-up may take before the bench gives up on it. */
const WARM_UP_TIMEOUT_MS = 300_000;

export async function benchFootprint(tree, daemon, { idleS, settleS, watcher }) {
  const readyMs = await daemon.ready;
  const readyAt = Date.now();
  const atReady = memoryMb(daemon.pid);
  const watches = inotifyWatches(daemon.pid);
  const cpuAtReady = cpuSeconds(daemon.pid);
  const warm = watcher === 'chokidar' ? null : await warmUp(daemon);
  const cpuWarm = cpuSeconds(daemon.pid);
  await sleep(settleS * 1000);
  const idleStartS = (Date.now() - readyAt) / 1000;
  const cpu0 = cpuSeconds(daemon.pid);
  await sleep(idleS * 1000);
  const cpu1 = cpuSeconds(daemon.pid);
  const atEnd = memoryMb(daemon.pid);
  if (cpu1 === null || !atEnd)
    throw new Error(`daemon ${daemon.pid} exited during the idle window:\n${daemon.output()}`);
  return {
    files: tree.files,
    watcher,
    readyMs: round(readyMs),
    startupCpuS: round(cpuAtReady, 2),
    rssAtReadyMb: round(atReady?.rss),
    warmUpS: warm === null ? null : round(warm.seconds, 1),
    warmUpCpuS: warm === null ? null : round(cpuWarm - cpuAtReady, 2),
    rssWithIndexMb: warm === null ? null : round(warm.rss),
    rssAfterIdleMb: round(atEnd.rss),
    peakRssMb: round(atEnd.hwm),
    inotifyWatches: watches,
    idleStartS: round(idleStartS),
    idleWindowS: idleS,
    idleCpuS: round(cpu1 - cpu0, 2),
    idleCpuPercentOfCore: round(((cpu1 - cpu0) / idleS) * 100, 2),
    warnings: daemon
      .output()
      .split('\n')
      .filter((line) => / (WARN|ERROR) /.test(line))
      .slice(0, 5),
  };
}

/** Waits for the index and the warm status; their time from ready and the RSS then. */
async function warmUp(daemon) {
  const started = Date.now();
  await waitFor(() => /status (not )?warmed/.test(daemon.output()), {
    timeoutMs: WARM_UP_TIMEOUT_MS,
    what: 'the warm status',
  });
  return { seconds: (Date.now() - started) / 1000, rss: memoryMb(daemon.pid)?.rss ?? null };
}
