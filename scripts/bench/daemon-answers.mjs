/**
 * Benchmark: `engine tag find` and `engine status` answered by a running daemon (its control
 * socket and live tag index), on the same generated tree as the find benchmark, side by side with
 * `rg -l` and a bare `node -e 0` (node's own start-up, in this environment), alternating the
 * order each round. `engine` is run as a user runs it: the built command itself (its launcher,
 * docs/CLI.md), not `node main.cjs`. ENGINE_ASK_DAEMON=only makes a run that the daemon did not
 * answer fail instead of reading the files, so every figure here is an answer from the daemon;
 * find's answer is scored against the tree's ground truth as find.mjs does.
 *
 * Timed twice on the same daemon: each command after the tree was quiet for BENCH_ANSWER_GAP_MS
 * (600 ms: as a command typed by hand), the figures of record; then back to back. An answer
 * waits for the watch to report a file the daemon writes (its sync, docs/DAEMON.md): the default
 * backend (fs.watch) reports it at once (@parcel/watcher only after half a second without events,
 * else after 50 ms more).
 *
 * The daemon's resident memory is taken with its index built, once its status is warm, and
 * after the timed answers.
 */
import { startDaemon } from './daemon.mjs';
import { score } from './find.mjs';
import { TAG } from './gen-tree.mjs';
import {
  ENGINE,
  NODE,
  log,
  memoryMb,
  round,
  sleep,
  timedRun,
  timeRounds,
  waitFor,
} from './lib.mjs';

const ASK = { ...process.env, ENGINE_ASK_DAEMON: 'only' };
const GAP_MS = Number(process.env.BENCH_ANSWER_GAP_MS ?? 600);

/** The commands timed; `cwd` is the tree's root, the project the daemon serves. */
const TOOLS = {
  'engine-find': (tree) => [ENGINE, ['tag', 'find', TAG, tree.sessions], ASK],
  rg: (tree) => ['rg', ['-l', '--no-config', '-e', TAG, tree.sessions], process.env],
  'engine-status': () => [ENGINE, ['status'], ASK],
  'node-e-0': () => [NODE, ['-e', '0'], process.env],
};

export async function benchDaemonAnswers(tree, runs) {
  const daemon = startDaemon(tree, ['--watcher', 'node']);
  try {
    await daemon.ready;
    const started = Date.now();
    await waitFor(() => daemon.output().includes('tag index ready'), {
      timeoutMs: 120_000,
      what: 'the tag index',
    });
    const withIndex = memoryMb(daemon.pid);
    log(`daemon answers: tag index ready ${Date.now() - started} ms after the daemon`);
    // The daemon asks itself a plain status once its index is built (docs/DAEMON.md).
    await waitFor(() => daemon.output().includes('status warmed'), {
      timeoutMs: 300_000,
      what: 'the warm status',
    });
    const warmedMs = Date.now() - started;
    const warm = memoryMb(daemon.pid);
    const answers = await timeTools(tree, runs, GAP_MS);
    const backToBack = await timeTools(tree, runs, 0);
    const after = memoryMb(daemon.pid);
    return {
      ...answers,
      gapMs: GAP_MS,
      backToBack: backToBack.tools,
      lifecycleShare: tree.lifecycleShare,
      statusWarmedMsAfterReady: warmedMs,
      rssMb: {
        withIndex: round(withIndex?.rss),
        statusWarmed: round(warm?.rss),
        afterAnswers: round(after?.rss),
        peak: round(after?.hwm),
      },
    };
  } finally {
    await daemon.stop();
  }
}

async function timeTools(tree, runs, gapMs) {
  const tools = await timeRounds(
    `daemon answers ${tree.files} (${gapMs} ms apart)`,
    Object.keys(TOOLS),
    runs,
    async (name) => {
      const [file, args, env] = TOOLS[name](tree);
      if (gapMs > 0) await sleep(gapMs);
      const run = await timedRun(file, args, { cwd: tree.dir, env });
      const scored = name === 'engine-find' || name === 'rg';
      return { run, score: scored ? score(run.stdout, tree.sessions, tree.truth) : null };
    },
  );
  return { files: tree.files, tools };
}
