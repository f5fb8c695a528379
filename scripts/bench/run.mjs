#!/usr/bin/env node
/**
 * `npm run bench`: generates seeded trees, runs the four benchmarks, prints a table and writes
 * the results as JSON (scripts/bench/results.json, or $BENCH_OUT). See docs/BENCHMARKS.md.
 *
 * Environment (all optional):
 *   BENCH_SIZES=10000,50000,100000   tree sizes for find and footprint
 *   BENCH_DAEMON_SIZE=50000          tree for latency and throughput (default: the size nearest 50,000)
 *   BENCH_SEED=1                     generator seed
 *   BENCH_FIND_RUNS=3                timed rounds per size (tools alternate in each round)
 *   BENCH_SHORT_DEBOUNCE_MS=200      short debounce for the latency trials
 *   BENCH_LATENCY_SHORT=100          trials at the short debounce
 *   BENCH_LATENCY_DEFAULT=20         trials at the default debounce (3000 ms)
 *   BENCH_THROUGHPUT_ITEMS=500       items delegated at once
 *   BENCH_THROUGHPUT_TIMEOUT_S=300   give up waiting for them after this long
 *   BENCH_THROUGHPUT_AGENTS=engine,sed  trivial agents to run it with: `engine tag swap` (a Node
 *                                    process per agent), and sed (costs almost nothing)
 *   BENCH_IDLE_S=300                 idle window for CPU, from BENCH_SETTLE_S=5 s after the daemon's
 *                                    warm-up (its index built, its status warm): it holds five
 *                                    periodic reconcile passes, one of them full (footprint.mjs)
 *   BENCH_WATCHERS=node,parcel,chokidar watch backends measured by footprint (--watcher); latency
 *                                    and throughput use the default, node
 *   BENCH_ONLY=find,answers,latency,throughput,footprint
 *                                    (answers: find and status answered by a running daemon,
 *                                    on the daemon tree, BENCH_FIND_RUNS rounds)
 *   BENCH_OUT=path.json              where to write the JSON
 *   BENCH_KEEP_TREES=1               keep the generated trees (printed paths)
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, release, platform } from 'node:os';
import { join } from 'node:path';
import { benchFind } from './find.mjs';
import { benchDaemonAnswers } from './daemon-answers.mjs';
import { generateTree } from './gen-tree.mjs';
import { AGENTS, startDaemon } from './daemon.mjs';
import { benchLatency, pickFiles } from './latency.mjs';
import { benchThroughput } from './throughput.mjs';
import { benchFootprint } from './footprint.mjs';
import {
  ENGINE,
  REPO,
  benchTmp,
  installCleanupHandlers,
  inotifyWatchesInUse,
  log,
  maxUserWatches,
  registerDir,
  round,
  sleep,
} from './lib.mjs';
import { formatTables } from './report.mjs';

const env = process.env;
const num = (name, fallback) => (env[name] ? Number(env[name]) : fallback);
const config = {
  sizes: (env.BENCH_SIZES ?? '10000,50000,100000').split(',').map(Number),
  seed: num('BENCH_SEED', 1),
  findRuns: num('BENCH_FIND_RUNS', 3),
  shortDebounceMs: num('BENCH_SHORT_DEBOUNCE_MS', 200),
  latencyShort: num('BENCH_LATENCY_SHORT', 100),
  latencyDefault: num('BENCH_LATENCY_DEFAULT', 20),
  throughputItems: num('BENCH_THROUGHPUT_ITEMS', 500),
  throughputTimeoutS: num('BENCH_THROUGHPUT_TIMEOUT_S', 300),
  throughputAgents: (env.BENCH_THROUGHPUT_AGENTS ?? 'engine,sed').split(','),
  idleS: num('BENCH_IDLE_S', 300),
  settleS: num('BENCH_SETTLE_S', 5),
  watchers: (env.BENCH_WATCHERS ?? 'node,parcel,chokidar').split(','),
  only: new Set((env.BENCH_ONLY ?? 'find,answers,latency,throughput,footprint').split(',')),
  out: env.BENCH_OUT ?? join(REPO, 'scripts', 'bench', 'results.json'),
};
config.daemonSize = num(
  'BENCH_DAEMON_SIZE',
  [...config.sizes].sort((a, b) => Math.abs(a - 50_000) - Math.abs(b - 50_000))[0],
);
const DEFAULT_DEBOUNCE_MS = 3000;
/** The default backend: latency and throughput run on it. */
const DEFAULT_WATCHER = 'node';

function version(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).split('\n')[0].trim();
  } catch {
    return null;
  }
}

/** ripgrep is a comparison tool only: installed here when missing, never a product dependency. */
function ensureRipgrep() {
  if (version('rg', ['--version'])) return;
  log('rg is missing: installing the Debian package ripgrep (apt-get install -y ripgrep)');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const apt = (...args) =>
    execFileSync(
      sudo[0] ?? 'apt-get',
      [...sudo.slice(1), ...(sudo.length ? ['apt-get'] : []), ...args],
      {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      },
    );
  try {
    apt('install', '-y', 'ripgrep');
  } catch {
    apt('update');
    apt('install', '-y', 'ripgrep');
  }
  if (!version('rg', ['--version'])) throw new Error('ripgrep could not be installed');
}

function machine() {
  const cpuList = cpus();
  return {
    cpu: cpuList[0]?.model ?? 'unknown',
    cores: cpuList.length,
    memoryGb: round(totalmem() / 2 ** 30, 1),
    os: `${platform()} ${release()}`,
    distro: version('sh', ['-c', '. /etc/os-release && echo "$PRETTY_NAME"']),
    node: process.version,
    ripgrep: version('rg', ['--version']),
    grep: version('grep', ['--version']),
    tmux: version('tmux', ['-V']),
    tmpFs: version('sh', [
      '-c',
      `df -T ${JSON.stringify(benchTmp().replace(/\/[^/]*$/, ''))} | tail -1 | awk '{print $2}'`,
    ]),
    maxUserWatches: maxUserWatches(),
    // Node parses this bundle at every start (docs/CLI.md): `node -e 0` pays it, engine's
    // status and tag commands do not.
    nodeExtraCaCerts: Boolean(env.NODE_EXTRA_CA_CERTS),
    loadAverageAtStart: loadavg().map((v) => round(v, 2)),
  };
}

async function main() {
  installCleanupHandlers();
  const startedAt = Date.now();
  if (!existsSync(ENGINE)) throw new Error(`${ENGINE} is missing: run npm run build first`);
  if (!version('tmux', ['-V'])) throw new Error('tmux is required for the daemon benchmarks');
  if (config.only.has('find') || config.only.has('answers')) ensureRipgrep();
  const results = {
    date: new Date().toISOString(),
    command: 'npm run bench',
    config: { ...config, only: [...config.only] },
    machine: machine(),
  };
  log(
    `machine: ${results.machine.cores} x ${results.machine.cpu}, load ${results.machine.loadAverageAtStart.join(' ')}`,
  );

  // Trees: one per size, seeded; file i is the same in every tree.
  const tmp = benchTmp();
  mkdirSync(tmp, { recursive: true });
  registerDir(tmp);
  const trees = new Map();
  const allSizes = [...new Set([...config.sizes, config.daemonSize])].sort((a, b) => a - b);
  for (const size of allSizes) {
    const t = Date.now();
    const tree = generateTree(join(tmp, `t${size}`), size, config.seed);
    trees.set(size, tree);
    log(
      `generated ${size} files (${round(tree.bytes / size)} B average, ${tree.truth['tags-line'].length} tags-line, ` +
        `${tree.truth.inline.length} inline, ${tree.truth.decoy.length} decoys) in ${Date.now() - t} ms: ${tree.dir}`,
    );
  }

  const treesWrittenAt = Date.now();
  if (config.only.has('find')) {
    results.find = [];
    for (const size of config.sizes)
      results.find.push(await benchFind(trees.get(size), config.findRuns));
  }

  const daemonTree = trees.get(config.daemonSize);
  if (config.only.has('answers')) {
    results.answers = await benchDaemonAnswers(daemonTree, config.findRuns);
    logAnswers(results.answers);
    // The same files with lifecycle tags on 2% of them, as in real use (gen-tree.mjs).
    const realUse = generateTree(
      join(tmp, `u${config.daemonSize}`),
      config.daemonSize,
      config.seed,
      {
        lifecycleShare: REAL_USE_LIFECYCLE_SHARE,
      },
    );
    results.answersRealUse = await benchDaemonAnswers(realUse, config.findRuns);
    logAnswers(results.answersRealUse);
  }
  const needsDaemonA =
    config.only.has('footprint') || config.only.has('latency') || config.only.has('throughput');
  let daemonA = null;
  let firstStartMs = null;
  if (config.only.has('footprint')) {
    // A first start on the tree (no no-work record: every file read), then daemon A restarts on
    // it with the record that start wrote (docs/DAEMON.md, The algorithm): both are reported.
    rmSync(join(daemonTree.dir, 'sessions', '.engine', 'no-work.json'), { force: true });
    // A file changed less than 5 s before its read is not recorded (its RACY_MS): as in real use,
    // the tree is older than that when the first start reads it.
    await sleep(Math.max(0, treesWrittenAt + 6000 - Date.now()));
    const first = startDaemon(daemonTree, ['--watcher', DEFAULT_WATCHER]);
    firstStartMs = round(await first.ready);
    // The record is written after ready; stop waits for it.
    await first.stop();
    log(
      `daemon on ${config.daemonSize} files, first start (no no-work record): ready in ${firstStartMs} ms`,
    );
  }
  if (needsDaemonA) {
    // Daemon A: default timings on the daemon tree. Its idle window is the footprint figure at that
    // size; then it serves the latency trials at the default debounce, then the throughput run.
    daemonA = startDaemon(daemonTree, ['--watcher', DEFAULT_WATCHER]);
    const readyA = await daemonA.ready;
    log(`daemon on ${config.daemonSize} files ready in ${round(readyA)} ms (pid ${daemonA.pid})`);
  }

  if (config.only.has('footprint')) {
    results.footprint = await footprints(trees, daemonA);
    const restarted = results.footprint.find(
      (f) => f.files === config.daemonSize && f.watcher === DEFAULT_WATCHER,
    );
    if (restarted) restarted.firstStartReadyMs = firstStartMs;
    for (const f of results.footprint)
      log(
        `footprint ${f.files} (${f.watcher}): ready ${f.readyMs} ms, RSS ${f.rssAtReadyMb} MB${f.warmUpS === null ? '' : ` (${f.rssWithIndexMb} MB with its index and status warm, after ${f.warmUpS} s, ${f.warmUpCpuS} s of CPU)`}, ${f.inotifyWatches} watches, ` +
          `idle CPU ${f.idleCpuPercentOfCore}% over ${f.idleWindowS} s from ${f.idleStartS} s after ready`,
      );
  }

  const used = new Set();
  const take = (count, seed) => {
    const files = pickFiles(daemonTree, count, seed, used);
    files.forEach((i) => used.add(i));
    return files;
  };
  results.latency = [];
  if (config.only.has('latency') && config.latencyDefault > 0) {
    results.latency.push(
      await benchLatency(daemonTree, daemonA, {
        debounceMs: DEFAULT_DEBOUNCE_MS,
        files: take(config.latencyDefault, 11),
      }),
    );
  }
  results.throughput = [];
  const throughput = async (daemon, agent, seed) => {
    const run = await benchThroughput(daemonTree, daemon, {
      files: take(config.throughputItems, seed),
      debounceMs: DEFAULT_DEBOUNCE_MS,
      timeoutMs: config.throughputTimeoutS * 1000,
    });
    results.throughput.push({ agent, ...run });
    log(`throughput (${agent} agent): ${JSON.stringify(run)}`);
  };
  const agents = config.only.has('throughput') ? config.throughputAgents : [];
  for (const agent of agents)
    if (!(agent in AGENTS)) throw new Error(`BENCH_THROUGHPUT_AGENTS: unknown agent ${agent}`);
  if (agents.includes('engine')) await throughput(daemonA, 'engine', 13);
  if (daemonA) await daemonA.stop();
  for (const [i, agent] of agents.filter((a) => a !== 'engine').entries()) {
    const daemon = startDaemon(daemonTree, ['--watcher', DEFAULT_WATCHER], {
      agent: AGENTS[agent],
    });
    await daemon.ready;
    await throughput(daemon, agent, 19 + i);
    await daemon.stop();
  }

  if (config.only.has('latency') && config.latencyShort > 0) {
    const daemonB = startDaemon(daemonTree, [
      '--watcher',
      DEFAULT_WATCHER,
      '--debounce-ms',
      String(config.shortDebounceMs),
    ]);
    await daemonB.ready;
    results.latency.push(
      await benchLatency(daemonTree, daemonB, {
        debounceMs: config.shortDebounceMs,
        files: take(config.latencyShort, 17),
      }),
    );
    await daemonB.stop();
  }
  results.latency.sort((a, b) => a.debounceMs - b.debounceMs);
  for (const l of results.latency)
    log(
      `latency at ${l.debounceMs} ms: ${JSON.stringify(l.beyondDebounceMs)} (${l.measured}/${l.trials})`,
    );

  results.machine.loadAverageAtEnd = loadavg().map((v) => round(v, 2));
  results.totalSeconds = round((Date.now() - startedAt) / 1000);
  const tables = formatTables(results);
  results.table = tables;
  await writeJson(config.out, results);
  process.stdout.write(`\n${tables}\n\nJSON: ${config.out}\n`);
  if (env.BENCH_KEEP_TREES === '1') process.stdout.write(`Trees kept under ${tmp}\n`);
}

/**
 * Footprint at every size, with every backend in BENCH_WATCHERS. The daemon-tree size with the
 * default backend reuses daemon A. The others start one after the other, largest first (each
 * after the previous is ready, so start-ups never overlap) and their idle windows run side by side
 * when the inotify limit has room for all of them at once, else one after another.
 */
async function footprints(trees, daemonA) {
  const opts = { idleS: config.idleS, settleS: config.settleS };
  const reuseA =
    config.sizes.includes(config.daemonSize) && config.watchers.includes(DEFAULT_WATCHER);
  const others = config.watchers
    .flatMap((watcher) => config.sizes.map((size) => ({ watcher, size })))
    .filter((r) => !(reuseA && r.watcher === DEFAULT_WATCHER && r.size === config.daemonSize))
    .sort((a, b) => b.size - a.size);
  const dirs = (n) => Math.ceil(n / 100) + 1;
  // node and parcel: one watch per directory; chokidar: one per directory and markdown file.
  const watches = ({ watcher, size }) => dirs(size) + (watcher === 'chokidar' ? size : 0);
  const need = others.reduce((sum, r) => sum + watches(r), 0);
  const headroom = maxUserWatches() - inotifyWatchesInUse();
  const together = need + 20_000 < headroom;
  log(
    `footprint: ${together ? 'idle windows side by side' : 'one daemon at a time'} ` +
      `(need ${need} watches, ${headroom} free)`,
  );
  const results = [];
  const pending = [];
  if (reuseA)
    pending.push(
      benchFootprint(trees.get(config.daemonSize), daemonA, { ...opts, watcher: DEFAULT_WATCHER }),
    );
  for (const { watcher, size } of others) {
    if (!together) await Promise.all(pending.splice(0)).then((r) => results.push(...r));
    const tree = trees.get(size);
    // Daemon A may hold the tree's own root: the other backends get a root of their own.
    const root = watcher === DEFAULT_WATCHER ? tree.dir : `${tree.dir}-${watcher}`;
    if (root !== tree.dir) {
      mkdirSync(join(root, 'directives'), { recursive: true });
      copyFileSync(join(tree.dir, 'directives', 'TAGS.md'), join(root, 'directives', 'TAGS.md'));
    }
    const daemon = startDaemon(tree, ['--watcher', watcher], { root });
    await daemon.ready;
    log(`daemon on ${size} files with ${watcher} ready (pid ${daemon.pid})`);
    pending.push(benchFootprint(tree, daemon, { ...opts, watcher }).finally(() => daemon.stop()));
  }
  results.push(...(await Promise.all(pending)));
  const order = (f) => config.watchers.indexOf(f.watcher);
  return results.sort((a, b) => order(a) - order(b) || a.files - b.files);
}

async function writeJson(path, data) {
  let text = `${JSON.stringify(data, null, 2)}\n`;
  try {
    const prettier = await import('prettier');
    text = await prettier.format(text, { parser: 'json', printWidth: 100 });
  } catch {
    // prettier is a devDependency; plain JSON is fine without it
  }
  writeFileSync(path, text);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

/** Lifecycle tags on this share of the real-use tree's files (the default tree: nearly all). */
const REAL_USE_LIFECYCLE_SHARE = 0.02;

function logAnswers(answers) {
  const line = (t, how) =>
    `find ${t['engine-find'].wallMs.median} ms = ${t['engine-find'].ratioToRg}x rg ` +
    `(${t.rg.wallMs.median} ms), status ${t['engine-status'].wallMs.median} ms, node -e 0 ${t['node-e-0'].wallMs.median} ms ${how}`;
  log(
    `daemon answers ${answers.files} (lifecycle tags on ${answers.lifecycleShare * 100}%): ` +
      `${line(answers.tools, `(${answers.gapMs} ms apart)`)}; ${line(answers.backToBack, '(back to back)')}; ` +
      `RSS ${answers.rssMb.withIndex} MB with the index, ${answers.rssMb.statusWarmed} MB warm, ${answers.rssMb.afterAnswers} MB after`,
  );
}
