/**
 * Benchmark 4: footprint. A daemon with the default timings (debounce 3 s, reconcile every 60 s,
 * reap every 30 s) and the given watch backend (`--watcher`) on the tree: time from spawn to
 * ready (its `monitoring` line), resident memory (VmRSS, and the peak VmHWM) and inotify watches
 * at ready, and CPU (utime + stime of all its threads, from /proc/<pid>/stat) while idle over a
 * window that starts `settleS` after ready, and the resident memory once the daemon serves answers
 * (its tag index built and its status warm, said in its log), when that comes within the window.
 * The daemon's periodic reconcile pass runs every 60 s after ready: a directory pass, and every
 * fifth (300 s) a full one. The default window (BENCH_IDLE_S=310 from 5 s after ready) holds four
 * directory passes and the first full one, so the figure is the long-run idle average.
 */
import { cpuSeconds, inotifyWatches, memoryMb, round, sleep } from './lib.mjs';

export async function benchFootprint(tree, daemon, { idleS, settleS, watcher }) {
  const readyMs = await daemon.ready;
  const readyAt = Date.now();
  const atReady = memoryMb(daemon.pid);
  const watches = inotifyWatches(daemon.pid);
  const cpuAtReady = cpuSeconds(daemon.pid);
  await sleep(Math.max(0, readyAt + settleS * 1000 - Date.now()));
  const cpu0 = cpuSeconds(daemon.pid);
  const end = Date.now() + idleS * 1000;
  let maxRss = 0;
  let withIndex = null;
  const samples = [];
  while (Date.now() < end) {
    const m = memoryMb(daemon.pid);
    if (!m)
      throw new Error(`daemon ${daemon.pid} exited during the idle window:\n${daemon.output()}`);
    maxRss = Math.max(maxRss, m.rss);
    // The whole daemon once it serves answers: its index built and its status warm.
    if (withIndex === null && daemon.output().includes('status warmed')) withIndex = m.rss;
    samples.push(round(m.rss));
    await sleep(Math.min(1000, Math.max(0, end - Date.now())));
  }
  const cpu1 = cpuSeconds(daemon.pid);
  const atEnd = memoryMb(daemon.pid);
  return {
    files: tree.files,
    watcher,
    readyMs: round(readyMs),
    startupCpuS: round(cpuAtReady, 2),
    rssAtReadyMb: round(atReady?.rss),
    rssAfterIdleMb: round(atEnd?.rss),
    rssWithIndexMb: withIndex === null ? null : round(withIndex),
    rssMaxIdleMb: round(maxRss),
    peakRssMb: round(atEnd?.hwm),
    inotifyWatches: watches,
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
