/**
 * Benchmark 1: `engine tag find` without a daemon (it runs before any daemon of the bench starts,
 * so it reads the files itself) against `rg -l` and against a two-pass `grep -r` search like the
 * bash tool engine replaced, on the same tree, in the same run, alternating the order each round.
 * Reports medians of wall time (and CPU time where /usr/bin/time exists), the ratio to rg, and
 * each tool's false positives and misses against the generator's ground truth.
 */
import { ENGINE, timedRun, timeRounds } from './lib.mjs';
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
  // The built command itself, as a user runs it (its launcher: docs/CLI.md).
  engine: (dir) => [ENGINE, ['tag', 'find', TAG, dir]],
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
  const tools = await timeRounds(
    `find ${tree.files}`,
    Object.keys(FIND_TOOLS),
    runs,
    async (name) => {
      const [file, args] = FIND_TOOLS[name](tree.sessions);
      const run = await timedRun(file, args);
      return { run, score: score(run.stdout, tree.sessions, tree.truth) };
    },
  );
  return {
    files: tree.files,
    positives: tree.truth['tags-line'].length + tree.truth.inline.length,
    decoys: tree.truth.decoy.length,
    tools,
  };
}
