/**
 * Generates a reproducible tree of markdown request files (about 2 KB each) with a known ground
 * truth for `#needs-implementation`:
 *
 *   tags-line  1%  the tag on the `**Tags**:` line
 *   inline     1%  the tag in prose (a list item, a paragraph, a heading); a quarter of these
 *                  lines also hold an unrelated code span (`npm test`)
 *   decoy      1%  the tag only inside code: an inline code span, a ``` fence (a Tags line shown
 *                  as an example) or a ~~~ fence
 *   other     97%  no occurrence (other lifecycle tags, `#P1`, URLs with fragments, code)
 *
 * Every block of 100 files holds exactly one file of each of the first three kinds, at seeded
 * positions. File i is the same in every tree built with the same seed, whatever the size.
 * The layout is `<dir>/sessions/sNNNN/rNNNNNN.md`, 100 files per directory, plus
 * `<dir>/directives/TAGS.md` with a `#delegated-bench` row for the daemon benchmarks.
 * Nearly every 'other' file carries a lifecycle tag (#needs-review, #done-docs, #next-fix...);
 * `lifecycleShare` keeps them on that share of the files only (real use: a few percent).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pick, rng } from './lib.mjs';

export const TAG = '#needs-implementation';
export const FILES_PER_DIR = 100;

export const TAGS_MD = `# Tags

## §TAG_DISPATCH

| Tag | Skill | Mode | Priority | Daemon |
|-----|-------|------|----------|--------|
| \`#delegated-bench\` | \`/bench\` | agent | 3 | yes |
| \`#delegated-implementation\` | \`/implement\` | agent | 4 | yes |
`;

const WORDS = (
  'the a of to and in for on with that this it as is be by from at or an are was not we can ' +
  'parser module request queue agent session daemon file tag claim worker build test cache ' +
  'index config schema token stream buffer event handler route table record state error ' +
  'retry timeout budget latency memory thread process signal socket window pane lock write ' +
  'read scan watch debounce priority weight backlog review release deploy migrate refactor ' +
  'document measure compare verify reproduce isolate rename extract inline split merge ' +
  'should must could will may needs after before when while because unless until every ' +
  'small large quick careful stable flaky slow fast clean broken missing stale fresh'
).split(' ');
const OTHER_TAGS = [
  '#needs-review',
  '#needs-research',
  '#done-implementation',
  '#done-docs',
  '#next-fix',
  '#needs-chores',
  '#P1',
  '#P2',
  '#S',
  '#M',
  '#L',
];
const CODE_SPANS = ['`npm test`', '`engine status`', '`src/index.ts`', '`--verbose`', '`git log`'];
const LINKS = [
  '[the design notes](https://example.com/design#queue)',
  '[issue 42](https://example.com/issues/42)',
  '[see below](#notes)',
  'https://example.com/page#needs-context',
];

function sentence(rand, min = 6, max = 16) {
  const n = min + Math.floor(rand() * (max - min));
  const words = [];
  for (let i = 0; i < n; i++) words.push(pick(rand, WORDS));
  const r = rand();
  if (r < 0.12) words.splice(Math.floor(rand() * words.length), 0, pick(rand, CODE_SPANS));
  else if (r < 0.2) words.splice(Math.floor(rand() * words.length), 0, pick(rand, LINKS));
  else if (r < 0.26) words.splice(Math.floor(rand() * words.length), 0, `**${pick(rand, WORDS)}**`);
  const s = words.join(' ');
  return s[0].toUpperCase() + s.slice(1) + '.';
}

const paragraph = (rand) =>
  Array.from({ length: 2 + Math.floor(rand() * 4) }, () => sentence(rand)).join(' ');

function block(rand) {
  const r = rand();
  if (r < 0.55) return paragraph(rand);
  if (r < 0.8) {
    const items = 2 + Math.floor(rand() * 4);
    return Array.from({ length: items }, () => `- ${sentence(rand, 4, 10)}`).join('\n');
  }
  if (r < 0.9) return `### ${sentence(rand, 2, 5).slice(0, -1)}`;
  return '```sh\nnpm run build\nengine tag find "#needs-review" sessions/\n```';
}

/** The line (or lines) that carry the tag for an inline or decoy file. */
function inlineLine(rand) {
  const text = sentence(rand, 5, 12).slice(0, -1);
  const withCode = rand() < 0.25;
  const body = withCode ? `${text}, then run ${pick(rand, CODE_SPANS)}` : text;
  const r = rand();
  if (r < 0.45) return `- ${body} ${TAG}`;
  if (r < 0.85) return `${body} ${TAG}. ${sentence(rand)}`;
  return `### Block: ${text.split(' ').slice(0, 3).join(' ')} ${TAG}`;
}

function decoyBlock(rand) {
  const r = rand();
  if (r < 0.4) return `${sentence(rand, 4, 8).slice(0, -1)} with \`${TAG}\` on its Tags line.`;
  if (r < 0.75)
    return `An example request:\n\n\`\`\`markdown\n# Example\n**Tags**: ${TAG} #P1\n\`\`\``;
  return `~~~text\nengine tag swap FILE '#delegated-implementation' '#claimed-implementation'\n${TAG} goes first\n~~~`;
}

const LIFECYCLE = /^#(needs|delegated|claimed|done|next)-/;

/**
 * One file's text for index i and kind ('tags-line' | 'inline' | 'decoy' | 'other'). With
 * `lifecycleShare` below 1, an 'other' file keeps its lifecycle tags (#needs-review, #done-docs,
 * ...) only at that rate, as in real use, where few requests wait on anyone; its other tags and
 * its text stay as they are.
 */
export function fileText(seed, index, kind, lifecycleShare = 1) {
  const rand = rng((seed * 1_000_003 + index * 7919) >>> 0);
  const target = 1700 + Math.floor(rand() * 600);
  const tags = [];
  const n = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) {
    const t = pick(rand, OTHER_TAGS);
    if (!tags.includes(t)) tags.push(t);
  }
  if (
    kind === 'other' &&
    lifecycleShare < 1 &&
    rng((seed * 7919 + index) >>> 0)() >= lifecycleShare
  )
    tags.splice(0, tags.length, ...tags.filter((t) => !LIFECYCLE.test(t)));
  if (kind === 'tags-line') tags.splice(Math.floor(rand() * (tags.length + 1)), 0, TAG);
  const title = sentence(rand, 3, 7).slice(0, -1);
  const parts = [`# ${title} (request ${index})`, `**Tags**: ${tags.join(' ')}`, '', '## Context'];
  const special = kind === 'inline' ? inlineLine(rand) : kind === 'decoy' ? decoyBlock(rand) : null;
  const specialAt = 1 + Math.floor(rand() * 4);
  let length = parts.join('\n').length;
  for (let b = 0; length < target || (special && b <= specialAt); b++) {
    const next = special && b === specialAt ? special : block(rand);
    if (b === 3) parts.push('', '## Notes');
    parts.push('', next);
    length += next.length + 2;
  }
  return parts.join('\n') + '\n';
}

/** Kind of every file: one tags-line, one inline, one decoy per block of 100, seeded positions. */
export function kinds(seed, files) {
  const out = new Array(files).fill('other');
  for (let blockStart = 0; blockStart < files; blockStart += 100) {
    const rand = rng((seed * 31 + blockStart) >>> 0);
    const size = Math.min(100, files - blockStart);
    const slots = [];
    while (slots.length < Math.min(3, size)) {
      const s = Math.floor(rand() * size);
      if (!slots.includes(s)) slots.push(s);
    }
    const labels = ['tags-line', 'inline', 'decoy'];
    slots.forEach((s, k) => (out[blockStart + s] = labels[k]));
  }
  return out;
}

export const relPath = (index) =>
  join(
    `s${String(Math.floor(index / FILES_PER_DIR)).padStart(4, '0')}`,
    `r${String(index).padStart(6, '0')}.md`,
  );

/**
 * Writes the tree under `dir` and returns its ground truth: relative paths (below sessions/)
 * of the files of each kind, and the total bytes written.
 */
export function generateTree(dir, files, seed, { lifecycleShare = 1 } = {}) {
  const sessions = join(dir, 'sessions');
  mkdirSync(join(dir, 'directives'), { recursive: true });
  writeFileSync(join(dir, 'directives', 'TAGS.md'), TAGS_MD);
  const kindOf = kinds(seed, files);
  const truth = { 'tags-line': [], inline: [], decoy: [], other: 0 };
  let bytes = 0;
  for (let i = 0; i < files; i++) {
    if (i % FILES_PER_DIR === 0) mkdirSync(join(sessions, relPath(i), '..'), { recursive: true });
    const text = fileText(seed, i, kindOf[i], lifecycleShare);
    writeFileSync(join(sessions, relPath(i)), text);
    bytes += Buffer.byteLength(text);
    if (kindOf[i] === 'other') truth.other++;
    else truth[kindOf[i]].push(relPath(i));
  }
  return { dir, sessions, files, seed, lifecycleShare, bytes, truth, kindOf };
}

// Run directly: `node scripts/bench/gen-tree.mjs DIR FILES [SEED]` writes one tree.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, files, seed = '1'] = process.argv.slice(2);
  if (!dir || !files) {
    process.stderr.write('usage: gen-tree.mjs DIR FILES [SEED]\n');
    process.exit(2);
  }
  const tree = generateTree(dir, Number(files), Number(seed));
  process.stdout.write(
    `${tree.files} files, ${(tree.bytes / tree.files).toFixed(0)} B average, ` +
      `tags-line ${tree.truth['tags-line'].length}, inline ${tree.truth.inline.length}, ` +
      `decoy ${tree.truth.decoy.length}\n`,
  );
}
