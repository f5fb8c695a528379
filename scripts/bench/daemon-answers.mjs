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
import { ENGINE, NODE, log, median, memoryMb, round, timedRun, waitFor } from './lib.mjs';

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
  const names = Object.keys(TOOLS);
  const samples = Object.fromEntries(names.map((n) => [n, { wall: [], cpu: [], scores: [] }]));
  for (let r = 0; r < runs; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const name of order) {
      const [file, args, env] = TOOLS[name](tree);
      const run = await timedRun(file, args, { cwd: tree.dir, env });
      if (run.code !== 0)
        throw new Error(`${name} exited ${run.code}: ${run.stderr.slice(0, 500)}`);
      samples[name].wall.push(run.wallMs);
      if (run.cpuMs !== null) samples[name].cpu.push(run.cpuMs);
      if (name === 'engine-find' || name === 'rg')
        samples[name].scores.push(score(run.stdout, tree.sessions, tree.truth));
    }
    log(
      `daemon answers ${tree.files}: round ${r + 1}/${runs}: ` +
        names.map((n) => `${n} ${round(samples[n].wall.at(-1))} ms`).join(', '),
    );
  }
  const rg = median(samples.rg.wall);
  const tools = {};
  for (const name of names) {
    const s = samples[name];
    tools[name] = {
      runs: s.wall.length,
      wallMs: {
        median: round(median(s.wall)),
        min: round(Math.min(...s.wall)),
        max: round(Math.max(...s.wall)),
      },
      cpuMs: s.cpu.length ? { median: round(median(s.cpu)) } : null,
      ratioToRg: round(median(s.wall) / rg, 2),
      ...(s.scores[0] ?? {}),
      ...(s.scores.length
        ? {
            sameResultEveryRun: s.scores.every(
              (x) => JSON.stringify(x) === JSON.stringify(s.scores[0]),
            ),
          }
        : {}),
    };
  }
  return { files: tree.files, tools };
}
