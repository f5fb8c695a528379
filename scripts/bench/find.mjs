/**
 * Benchmark 1: `engine tag find` without a daemon (it runs before any daemon of the bench starts,
 * so it reads the files itself) against `rg -l` and against a two-pass `grep -r` search like the
 * bash tool engine replaced, on the same tree, in the same run, alternating the order each round.
 * Reports medians of wall time (and CPU time where /usr/bin/time exists), the ratio to rg, and
 * each tool's false positives and misses against the generator's ground truth.
 */
import { ENGINE, NODE, median, round, timedRun, log } from './lib.mjs';
import { TAG } from './gen-tree.mjs';

/**
 * The bash tool's search, reconstructed: pass 1 lists the files holding the text at all
 * (`grep -rlF`), pass 2 greps those files for the tag with word boundaries and drops lines that
 * show code (a backtick), as its inline-tag filter did. It knows nothing about fenced blocks.
 */
const GREP_TWO_PASS = `set -o pipefail
grep -rlF --include='*.md' -e "$1" "$2" \\
  | xargs -r -d '\\n' grep -HnE -e "(^|[^[:alnum:]_/&#-])$1([^[:alnum:]_-]|\\$)" \\
  | grep -v '\`' | cut -d: -f1 | sort -u || test $? = 1`;

export const FIND_TOOLS = {
  engine: (dir) => [NODE, [ENGINE, 'tag', 'find', TAG, dir]],
  rg: (dir) => ['rg', ['-l', '--no-config', '-e', TAG, dir]],
  'grep-2pass': (dir) => ['bash', ['-c', GREP_TWO_PASS, 'grep-2pass', TAG, dir]],
};

export function score(stdout, dir, truth) {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const found = new Set(
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => (line.startsWith(prefix) ? line.slice(prefix.length) : line)),
  );
  const positives = new Set([...truth['tags-line'], ...truth.inline]);
  const falsePositives = [...found].filter((p) => !positives.has(p));
  const misses = [...positives].filter((p) => !found.has(p));
  const decoys = new Set(truth.decoy);
  return {
    found: found.size,
    falsePositives: falsePositives.length,
    falsePositivesFromDecoys: falsePositives.filter((p) => decoys.has(p)).length,
    misses: misses.length,
    missesTagsLine: misses.filter((p) => truth['tags-line'].includes(p)).length,
    missesInline: misses.filter((p) => truth.inline.includes(p)).length,
    examples: { falsePositive: falsePositives[0] ?? null, miss: misses[0] ?? null },
  };
}

/** Runs every tool `runs` times on the tree, rotating the order each round. */
export async function benchFind(tree, runs) {
  const names = Object.keys(FIND_TOOLS);
  const samples = Object.fromEntries(names.map((n) => [n, { wall: [], cpu: [], scores: [] }]));
  for (let round_ = 0; round_ < runs; round_++) {
    const order = names.map((_, i) => names[(i + round_) % names.length]);
    for (const name of order) {
      const [file, args] = FIND_TOOLS[name](tree.sessions);
      const r = await timedRun(file, args);
      if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.stderr.slice(0, 500)}`);
      samples[name].wall.push(r.wallMs);
      if (r.cpuMs !== null) samples[name].cpu.push(r.cpuMs);
      samples[name].scores.push(score(r.stdout, tree.sessions, tree.truth));
    }
    log(
      `find ${tree.files}: round ${round_ + 1}/${runs}: ` +
        names.map((n) => `${n} ${round(samples[n].wall.at(-1))} ms`).join(', '),
    );
  }
  const rgMedian = median(samples.rg.wall);
  const result = {};
  for (const name of names) {
    const s = samples[name];
    const scores = s.scores;
    const stable = scores.every((x) => JSON.stringify(x) === JSON.stringify(scores[0]));
    result[name] = {
      runs: s.wall.length,
      wallMs: {
        median: round(median(s.wall)),
        min: round(Math.min(...s.wall)),
        max: round(Math.max(...s.wall)),
      },
      cpuMs: s.cpu.length ? { median: round(median(s.cpu)) } : null,
      ratioToRg: round(median(s.wall) / rgMedian, 2),
      ...scores[0],
      sameResultEveryRun: stable,
    };
  }
  return {
    files: tree.files,
    positives: tree.truth['tags-line'].length + tree.truth.inline.length,
    decoys: tree.truth.decoy.length,
    tools: result,
  };
}
