/**
 * The fast path must agree with remark on every text it decides. A differential property over
 * generated markdown (blocks, indentation, inline constructs, front matter, hostile characters),
 * the benchmark generator's request files, and the cases it must leave to remark.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanTagsFast } from '../../src/tags/scan-fast.js';
import { scanTagsWithRemark } from '../../src/tags/scan-remark.js';
import { dependsOnOf } from '../../src/tags/depends-on-line.js';
import type { TagScan } from '../../src/tags/scan-tags.js';
import { fileText, kinds } from '../../scripts/bench/gen-tree.mjs';

const TORTURE = process.env.ENGINE_TORTURE === '1';

/** Everything a caller reads from a scan, except the line index. */
const decided = (scan: TagScan) => ({
  occurrences: scan.occurrences,
  tagsLine: scan.tagsLine,
  h1EndLine: scan.h1EndLine,
  frontMatterEnd: scan.frontMatterEnd,
  problems: scan.problems,
  dependsOn: dependsOnOf(scan),
});

/** Runs both locators; returns whether the fast path decided, and fails on any difference. */
function agree(text: string): boolean {
  const fast = scanTagsFast(text);
  if (!fast) return false;
  expect(decided(fast), JSON.stringify(text)).toEqual(decided(scanTagsWithRemark(text)));
  return true;
}

const WORDS = ['word', 'the', 'é', 'x', 'fix', '2024', 'a.b', 'C#', 'snake_case', 'a/b.md'];
const TAGS = ['#needs-x', '#delegated-impl', '#claimed-y', '#P1', '#a', '#2fa', '#needs-x-'];
const INLINE = [
  '`',
  '``',
  '`#needs-c`',
  '`` a ` #needs-d ``',
  '*',
  '**',
  '_',
  '~',
  '~~',
  '[',
  ']',
  '(',
  ')',
  '](',
  '[a](#needs-l)',
  '[b #needs-t](http://x.y/p#frag)',
  '[c](<u>)',
  '[d](u "t")',
  '<',
  '>',
  '<b>',
  '<!-- #needs-h -->',
  '&amp;',
  '&#35;needs-e',
  '|',
  '!',
  '![i](#needs-i)',
  '[^1]',
  ']:',
  'http://x.com/?q=#needs-q',
  'www.x.com/#needs-w',
  'a@b.co',
  ':',
  '\\',
  '\\#needs-b',
  '\\`',
  '#',
  '##',
  'x#y',
  '/#z',
  '_#needs-u_',
  '**#needs-s**',
  '#needs-z*',
  '\t',
];
const PREFIXES = [
  '',
  '',
  '',
  '# ',
  '## ',
  '- ',
  '* ',
  '+ ',
  '1. ',
  '2) ',
  '-     ',
  '- [ ] ',
  '- - ',
  '> ',
  '**Tags**: ',
  '**Tags**:',
  '**Depends On**: ',
  '[x]: ',
  '*   **Reason**: ',
  '*   **Action**: ',
  '```',
  '~~~',
  '```js ',
  '|',
];
const WHOLE_LINES = [
  '',
  '',
  '## Recovery',
  '## Recovery',
  '```',
  '~~~',
  '````',
  '---',
  '***',
  '===',
  '- - -',
  '-',
  '+++',
  '<div>',
  '</div>',
  '| a | b |',
  '|---|---|',
  '    code #needs-i',
];
const INDENTS = ['', '', '', ' ', '  ', '   ', '    ', '     ', '      ', '        ', '\t', ' \t'];
const FRONT_MATTER = [
  '',
  '',
  '',
  '---\ntags: [needs-a, "#delegated-b"]\n---\n',
  '---\ntags: "#needs-c #P1"\ntitle: x\n---  \n',
  '---\ntitle: x\n---\n',
  '---\ndepends_on: [a.md, "b/*.md"]\ntags: [delegated-b]\n---\n',
  '---\nbad: [\n---\n',
  '---\n',
  '---\ntags: a\n',
  '+++\na = 1\n+++\n',
  '--- \n---\n',
];

/** Benign tokens dominate so most texts are decided; the rest probe the edges. */
const token = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 4, arbitrary: fc.constantFrom(...TAGS) },
  { weight: 1, arbitrary: fc.constantFrom(...INLINE) },
);
const line = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...INDENTS),
        fc.constantFrom(...PREFIXES),
        fc.array(fc.tuple(token, fc.constantFrom(' ', ' ', '', '  ')), { maxLength: 8 }),
      )
      .map(([indent, prefix, parts]) => indent + prefix + parts.map(([t, s]) => t + s).join('')),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...INDENTS), fc.constantFrom(...WHOLE_LINES))
      .map(([indent, whole]) => indent + whole),
  },
);
const document = fc
  .tuple(
    fc.constantFrom(...FRONT_MATTER),
    fc.array(line, { minLength: 1, maxLength: 14 }),
    fc.constantFrom('\n', '\n', '\n', '\r\n', '\r'),
    fc.boolean(),
  )
  .map(([matter, lines, eol, final]) => matter + lines.join(eol) + (final ? eol : ''));

describe('the fast tag locator', () => {
  it(
    'agrees with remark on every generated text it decides, and decides many',
    () => {
      let total = 0;
      let decidedCount = 0;
      fc.assert(
        fc.property(document, (text) => {
          total++;
          if (agree(text)) decidedCount++;
        }),
        { numRuns: TORTURE ? 100_000 : 3000, seed: TORTURE ? undefined : 20261123 },
      );
      // A path that declines everything would pass the property vacuously.
      expect(decidedCount / total).toBeGreaterThan(0.15);
    },
    TORTURE ? 1_800_000 : undefined,
  );

  it('agrees with remark on Recovery entries, whose field lines carry no tags', () => {
    const field = fc
      .tuple(
        fc.constantFrom('*   **Reason**: ', '*   **Action**: ', '*   **Note**: ', '  ', '## ', ''),
        fc.array(fc.tuple(token, fc.constantFrom(' ', '')), { maxLength: 6 }),
      )
      .map(([prefix, parts]) => prefix + parts.map(([t, s]) => t + s).join(''));
    const entries = fc
      .tuple(
        fc.array(line, { maxLength: 4 }),
        fc.constantFrom('## Recovery', '## Recovery ', '```\n## Recovery', '    ## Recovery'),
        fc.array(fc.oneof(field, line), { minLength: 1, maxLength: 8 }),
      )
      .map(([before, heading, body]) => [...before, heading, ...body].join('\n') + '\n');
    let decidedCount = 0;
    fc.assert(
      fc.property(entries, (text) => {
        if (agree(text)) decidedCount++;
      }),
      { numRuns: TORTURE ? 50_000 : 1500, seed: TORTURE ? undefined : 20261201 },
    );
    expect(decidedCount).toBeGreaterThan(300);
  });

  it('decides every request file of the benchmark generator, as remark does', () => {
    const files = 400;
    const kindOf = kinds(7, files);
    for (let i = 0; i < files; i++) {
      expect(agree(fileText(7, i, kindOf[i] as string)), `file ${i}`).toBe(true);
    }
  });

  it('decides a typical request file: title, Tags line, lists, code, links, front matter', () => {
    const text = [
      '---',
      'tags: [needs-review]',
      '---',
      '# Fix the parser #P1',
      '**Tags**: #delegated-implementation #S',
      '',
      '## Context',
      '',
      'See [the notes](#notes) and [docs](https://x.com/a#b); run `engine tag find "#x"`.',
      '',
      '- first #needs-research',
      '- [ ] second with `#needs-not`',
      '  continued #needs-more',
      '',
      '```markdown',
      '**Tags**: #needs-example',
      '```',
      '',
      '    indented #needs-code',
      '',
      'Done: #done-docs.',
    ].join('\n');
    expect(agree(text)).toBe(true);
    expect(scanTagsFast(text)?.occurrences.map((o) => `${o.tag}:${o.place}:${o.line}`)).toEqual([
      '#needs-review:front-matter:2',
      '#P1:prose:4',
      '#delegated-implementation:tags-line:5',
      '#S:tags-line:5',
      '#needs-research:prose:11',
      '#needs-more:prose:13',
      '#done-docs:prose:21',
    ]);
  });

  it.each([
    ['an unpaired backtick', '### Block: build `git #needs-x\n'],
    ['an unpaired run before a code span', '# a ` b ``c #needs-y`` #needs-x\n'],
  ])('decides a heading with %s: no code span reaches past it', (_what, text) => {
    expect(agree(text)).toBe(true);
    expect(scanTagsFast(text)?.occurrences.map((o) => o.tag)).toEqual(['#needs-x']);
  });

  it.each([
    ['HTML', 'a <span>#needs-x</span>\n'],
    ['an HTML block', '<div>\n\n```\n</div>\n#needs-x\n'],
    ['a block quote', '> #needs-x\n'],
    ['a table', '| a |\n| - |\n| #needs-x |\n'],
    ['an image', '![#needs-x](a.png)\n'],
    ['a reference definition', '[#needs-x]: /url\n'],
    ['a footnote', '[^#needs-x]\n'],
    ['a setext title', 'Title #needs-x\n===\n'],
    ['a tab in indentation', '\t#needs-x\n'],
    ['a fence inside a list item', '- a\n\n  ```\n  #needs-x\n  ```\n'],
    ['an unpaired backtick', 'a ` b\nc ` #needs-x `\n'],
    ['emphasis touching a tag', '**#needs-x**\n'],
    ['a tag inside a URL', 'https://x.com/?q=#needs-x\n'],
    ['a link title', '[a](u "#needs-x")\n'],
    ['a lone CR', 'a\r#needs-x\n'],
    // Found by the torture run: "word" may open indented code in the empty item, or a paragraph.
    ['lines below an empty list item', '- \n      word \n      code #needs-x\n'],
  ])('leaves %s to remark', (_what, text) => {
    expect(scanTagsFast(text)).toBeNull();
  });
});

describe('the remark locator', () => {
  it('keeps the tags of a paragraph with a bare URL after an unclosed bracket', () => {
    // remark-gfm's autolink transform used to rebuild this paragraph without source positions.
    const text = '#needs-x [ www.x.com/#needs-w\n';
    expect(scanTagsWithRemark(text).occurrences.map((o) => o.tag)).toEqual(['#needs-x']);
  });
});
