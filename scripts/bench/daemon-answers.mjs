/**
 * Benchmark: `engine tag find` and `engine status` answered by a running daemon (its control
 * socket and live tag index), on the same generated tree as the find benchmark, side by side with
 * `rg -l` and a bare `node -e 0` (the floor: node's own start-up), alternating the order each
 * round. ENGINE_ASK_DAEMON=only makes a run that the daemon did not answer fail instead of
 * reading the files, so every figure here is an answer from the daemon; find's answer is scored
 * against the tree's ground truth as find.mjs does. The daemon's resident memory is taken with
 * its index built, once its status is warm, and after the timed answers.
 */
import { startDaemon } from './daemon.mjs';
import { score } from './find.mjs';
import { TAG } from './gen-tree.mjs';
import { ENGINE, NODE, log, memoryMb, round, timedRun, timeRounds, waitFor } from './lib.mjs';

const ASK = { ...process.env, ENGINE_ASK_DAEMON: 'only' };

/** The commands timed; `cwd` is the tree's root, the project the daemon serves. */
const TOOLS = {
  'engine-find': (tree) => [NODE, [ENGINE, 'tag', 'find', TAG, tree.sessions], ASK],
  rg: (tree) => ['rg', ['-l', '--no-config', '-e', TAG, tree.sessions], process.env],
  'engine-status': () => [NODE, [ENGINE, 'status'], ASK],
  'node-e-0': () => [NODE, ['-e', '0'], process.env],
};

export async function benchDaemonAnswers(tree, runs) {
  const daemon = startDaemon(tree, ['--watcher', 'parcel']);
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
    const answers = await timeTools(tree, runs);
    const after = memoryMb(daemon.pid);
    return {
      ...answers,
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

async function timeTools(tree, runs) {
  const tools = await timeRounds(
    `daemon answers ${tree.files}`,
    Object.keys(TOOLS),
    runs,
    async (name) => {
      const [file, args, env] = TOOLS[name](tree);
      const run = await timedRun(file, args, { cwd: tree.dir, env });
      const scored = name === 'engine-find' || name === 'rg';
      return { run, score: scored ? score(run.stdout, tree.sessions, tree.truth) : null };
    },
  );
  return { files: tree.files, tools };
}
