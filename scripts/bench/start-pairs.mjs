/**
 * The daemon's start, two builds side by side: `node scripts/bench/start-pairs.mjs TREE
 * ENGINE_A ENGINE_B [PAIRS]` starts `engine run --monitor-tags` on TREE (a project, e.g. one
 * written by gen-tree.mjs) with each build's CLI (a dist/cli/main.cjs) in turn, PAIRS times
 * (default 5), the order alternating each pair, and prints for each start: the wall time to its
 * `monitoring` line, the CPU of all its threads then (/proc), its resident memory then, and the
 * load average. With `BENCH_AFTER_READY_MS=N`, the CPU and memory are also taken N ms later.
 * With `BENCH_UNTIL_WARM=1`, also the resident memory and CPU at its `tag index ready` and
 * `status warmed` lines, and its peak resident memory then (VmHWM).
 * The machine is shared: compare CPU first, and wall time only between neighbouring starts.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  NODE,
  cpuSeconds,
  forgetPid,
  installCleanupHandlers,
  killTmuxServer,
  median,
  memoryMb,
  registerPid,
  registerSocket,
  round,
  sleep,
} from './lib.mjs';

const [tree, engineA, engineB, pairsArg = '5'] = process.argv.slice(2);
if (!tree || !engineA || !engineB) {
  process.stderr.write('usage: start-pairs.mjs TREE ENGINE_A ENGINE_B [PAIRS]\n');
  process.exit(2);
}
const afterReadyMs = Number(process.env.BENCH_AFTER_READY_MS ?? 0);
const untilWarm = process.env.BENCH_UNTIL_WARM === '1';
installCleanupHandlers();

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

async function startOnce(engine, n) {
  const socket = `start-pairs-${process.pid}-${n}`;
  registerSocket(socket);
  const started = process.hrtime.bigint();
  const args = [engine, 'run', '--monitor-tags', '--root', tree, '--tmux-socket', socket];
  const child = spawn(NODE, [...args, '--agent-cmd', 'true', '--max-agents', '0'], {
    env: { ...process.env, TMUX: '', TMUX_PANE: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  registerPid(child.pid);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let output = '';
  const result = await new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      if (!output.includes('monitoring ')) return;
      child.stderr.removeAllListeners('data');
      if (!untilWarm) child.stderr.resume();
      const wall = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({ wall, cpu: cpuSeconds(child.pid), rss: memoryMb(child.pid)?.rss, load: load() });
    });
    void exited.then((code) => reject(new Error(`daemon exited (${code}):\n${output}`)));
  });
  if (untilWarm) {
    const seen = (line) =>
      new Promise((resolve) => {
        const look = () => {
          if (!output.includes(line)) return;
          child.stderr.off('data', onData);
          const memory = memoryMb(child.pid);
          resolve({ rss: memory?.rss, hwm: memory?.hwm, cpu: cpuSeconds(child.pid) });
        };
        const onData = (chunk) => {
          output += chunk;
          look();
        };
        child.stderr.on('data', onData);
        look();
      });
    result.indexed = await seen('tag index ready');
    result.warmed = await seen('status warmed');
  }
  if (afterReadyMs > 0) {
    await sleep(afterReadyMs);
    result.cpuLater = cpuSeconds(child.pid);
    result.rssLater = memoryMb(child.pid)?.rss;
  }
  child.kill('SIGTERM');
  await exited;
  forgetPid(child.pid);
  killTmuxServer(socket);
  return result;
}

const builds = { A: engineA, B: engineB };
const runs = { A: [], B: [] };
const pairs = Number(pairsArg);
for (let p = 0; p < pairs; p++) {
  for (const name of p % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
    const r = await startOnce(builds[name], p * 2 + (name === 'A' ? 0 : 1));
    runs[name].push(r);
    const later =
      afterReadyMs > 0
        ? `, +${afterReadyMs} ms: CPU ${r.cpuLater} s, RSS ${round(r.rssLater)} MB`
        : '';
    const warm = r.warmed
      ? `, indexed: RSS ${round(r.indexed.rss)} MB, CPU ${r.indexed.cpu} s; warmed: RSS ${round(r.warmed.rss)} MB, peak ${round(r.warmed.hwm)} MB, CPU ${r.warmed.cpu} s`
      : '';
    process.stdout.write(
      `${name} ready ${round(r.wall)} ms, CPU ${r.cpu} s, RSS ${round(r.rss)} MB, load ${r.load}${warm}${later}\n`,
    );
    await sleep(1000);
  }
}
for (const name of ['A', 'B']) {
  const list = runs[name];
  const m = (key) => round(median(list.map((r) => r[key])), 2);
  const later =
    afterReadyMs > 0 ? `, CPU later ${m('cpuLater')} s, RSS later ${m('rssLater')} MB` : '';
  process.stdout.write(
    `${name} (${builds[name]}): median ready ${m('wall')} ms, CPU ${m('cpu')} s, RSS ${m('rss')} MB${later}\n`,
  );
}
