/**
 * Benchmark 2: detection latency. With the daemon ready on the tree, one file at a time gets
 * `#delegated-bench` on its Tags line (an in-place write, as an editor saving does); the time
 * until the file shows `#claimed-bench`, minus the debounce, is one trial. The file is watched
 * with fs.watch on its directory (the claim is a rename) plus a 20 ms poll as a safety net.
 * Before the next trial the agent of the last one must have finished (its `.state.json` says
 * `exited`), so trials do not compete with agents for the CPU.
 */
import { readFileSync, watch, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { percentile, median, round, sleep, waitFor, log, rng } from './lib.mjs';
import { relPath } from './gen-tree.mjs';

/** Files of kind 'other' (no tag, nothing delegated), chosen by a seeded shuffle, distinct. */
export function pickFiles(tree, count, seed, exclude = new Set()) {
  const rand = rng(seed);
  const out = [];
  const taken = new Set(exclude);
  while (out.length < count) {
    const i = Math.floor(rand() * tree.files);
    if (tree.kindOf[i] !== 'other' || taken.has(i)) continue;
    taken.add(i);
    out.push(i);
  }
  return out;
}

export function delegate(path) {
  const text = readFileSync(path, 'utf8');
  const next = text.replace(/^\*\*Tags\*\*: /m, '**Tags**: #delegated-bench ');
  if (next === text) throw new Error(`no Tags line in ${path}`);
  writeFileSync(path, next);
}

/** Resolves with performance.now() when `path` first contains one of `needles`. */
function whenContains(path, needles, timeoutMs) {
  return new Promise((resolve, reject) => {
    let done = false;
    const check = () => {
      if (done) return;
      let text;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        return; // between unlink and rename: the next event or poll sees it
      }
      if (needles.some((n) => text.includes(n))) finish(null, performance.now());
    };
    const watcher = watch(dirname(path), check);
    const poll = setInterval(check, 20);
    const timer = setTimeout(() => finish(new Error(`timed out: ${path}`)), timeoutMs);
    function finish(error, at) {
      done = true;
      watcher.close();
      clearInterval(poll);
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(at);
    }
    check();
  });
}

function sessionDirOf(tree, path) {
  const ref = /^\*\*Session\*\*: (\S+)/m.exec(readFileSync(path, 'utf8'))?.[1];
  return ref ? join(tree.dir, ref) : null;
}

function sessionStatus(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, '.state.json'), 'utf8')).status;
  } catch {
    return null;
  }
}

/** Runs `trials` sequential trials on a ready daemon whose debounce is `debounceMs`. */
export async function benchLatency(tree, daemon, { debounceMs, files }) {
  const latencies = [];
  const failures = [];
  const jitter = rng(debounceMs);
  for (const [k, index] of files.entries()) {
    const path = join(tree.sessions, relPath(index));
    const claimed = whenContains(path, ['#claimed-bench', '#done-bench'], debounceMs + 60_000);
    delegate(path);
    const t0 = performance.now();
    try {
      const at = await claimed;
      latencies.push(at - t0 - debounceMs);
    } catch (error) {
      failures.push(String(error));
      continue;
    }
    // Let the agent finish (the file says done, the wrapper recorded its exit) before the next.
    try {
      await waitFor(() => readFileSync(path, 'utf8').includes('#done-bench'), {
        timeoutMs: 60_000,
        intervalMs: 20,
        what: `#done-bench in ${path}`,
      });
      const dir = sessionDirOf(tree, path);
      if (dir)
        await waitFor(() => sessionStatus(dir) === 'exited', {
          timeoutMs: 30_000,
          intervalMs: 20,
          what: `exited in ${dir}`,
        });
    } catch (error) {
      failures.push(String(error));
    }
    // A short random pause, so trials do not phase-lock with the daemon's timers.
    await sleep(100 + Math.floor(jitter() * 200));
    if ((k + 1) % 10 === 0)
      log(
        `latency (debounce ${debounceMs} ms): ${k + 1}/${files.length}, last ${round(latencies.at(-1))} ms`,
      );
  }
  return {
    debounceMs,
    trials: files.length,
    measured: latencies.length,
    failures,
    beyondDebounceMs: {
      p50: round(median(latencies)),
      p95: round(percentile(latencies, 95)),
      max: round(Math.max(...latencies)),
      min: round(Math.min(...latencies)),
    },
    all: latencies.map((v) => round(v)),
  };
}
