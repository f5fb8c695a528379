/**
 * The `**Depends On**:` line and the front matter `depends_on:` key: found like the Session line
 * (outside code, by the one locator), the fast path and remark agreeing on every text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dependencyEntries, dependsOnOf } from '../../src/tags/depends-on-line.js';
import { summaryOf } from '../../src/tags/scan-pool.js';
import { scanTagsFast } from '../../src/tags/scan-fast.js';
import { scanTagsWithRemark } from '../../src/tags/scan-remark.js';
import { scanTags } from '../../src/tags/scan-tags.js';

const dependsOn = (text: string): string[] => dependsOnOf(scanTags(text));

describe('the entries of a Depends On value', () => {
  it('splits at commas and white space, and keeps a glob brace whole', () => {
    expect(dependencyEntries(' a.md, b/c.md  d/*.md,e/{x,y}.md ,, ')).toEqual([
      'a.md',
      'b/c.md',
      'd/*.md',
      'e/{x,y}.md',
    ]);
  });

  it('takes an entry written as a code span without its backticks', () => {
    expect(dependencyEntries('`sessions/*.md`, `a.md`')).toEqual(['sessions/*.md', 'a.md']);
  });
});

describe('the Depends On line', () => {
  it('is read below the Tags line, every such line, each entry once', () => {
    const text = [
      '# Ship it',
      '**Tags**: #delegated-fix',
      '**Depends On**: sessions/a.md, sessions/b.md',
      '',
      'Some text.',
      '',
      '**Depends On**: `sessions/phase-1/*.md` sessions/a.md',
      '',
    ].join('\n');
    expect(dependsOn(text)).toEqual(['sessions/a.md', 'sessions/b.md', 'sessions/phase-1/*.md']);
  });

  it('is not read inside code, indented, or inside a list item', () => {
    const text = [
      '# T',
      '**Tags**: #delegated-fix',
      '',
      '```markdown',
      '**Depends On**: fenced.md',
      '```',
      '',
      '    **Depends On**: indented.md',
      '',
      '- **Depends On**: listed.md',
      '',
      '<!--',
      '**Depends On**: html.md',
      '-->',
      '',
    ].join('\n');
    expect(dependsOn(text)).toEqual([]);
  });

  it('is a prefix written exactly: another spelling is text', () => {
    expect(dependsOn('**Depends on**: a.md\n\n**DependsOn**: b.md\n\nDepends On: c.md\n')).toEqual(
      [],
    );
  });

  it('reaches the daemon in the scan summary', () => {
    const text = '# T\n**Tags**: #delegated-fix\n**Depends On**: a.md\n';
    expect(summaryOf(scanTags(text), text).dependsOn).toEqual(['a.md']);
  });
});

describe('front matter depends_on', () => {
  it.each([
    ['a flow list', '---\ndepends_on: [a.md, "b/*.md"]\n---\n', ['a.md', 'b/*.md']],
    ['a block list', '---\ndepends_on:\n  - a.md\n  - b.md\n---\n', ['a.md', 'b.md']],
    ['a string', '---\ndepends_on: "a.md, b.md"\n---\n', ['a.md', 'b.md']],
    ['nothing', '---\ndepends_on:\n---\n', []],
  ])('is read from %s', (_label, text, expected) => {
    expect(dependsOn(text)).toEqual(expected);
  });

  it('joins the Depends On line, each entry once', () => {
    const text = '---\ndepends_on: [a.md]\ntags: [delegated-fix]\n---\n**Depends On**: a.md b.md\n';
    expect(dependsOn(text)).toEqual(['a.md', 'b.md']);
  });

  it('holding a map is a problem on its line, and no entry', () => {
    const scan = scanTags('---\ntitle: x\ndepends_on:\n  a: b\n---\n# T\n');
    expect(dependsOnOf(scan)).toEqual([]);
    expect(scan.problems).toEqual([
      {
        line: 4,
        message: expect.stringMatching(/`depends_on:` holds .* not read as dependencies/),
      },
    ]);
  });

  it('is not read from TOML front matter, which carries no tags either', () => {
    expect(dependsOn('+++\ndepends_on = ["a.md"]\n+++\n')).toEqual([]);
  });
});

describe('the fast path and remark', () => {
  const entry = fc.constantFrom('a.md', 'b/c.md', '`d/*.md`', 'e/{x,y}.md', '#P1', '*x*', '<b>');
  const value = fc
    .array(fc.tuple(entry, fc.constantFrom(', ', ' ', ',')), { maxLength: 4 })
    .map((parts) => parts.map(([e, s]) => e + s).join(''));
  const line = fc.oneof(
    value.map((v) => `**Depends On**: ${v}`),
    fc.constantFrom(
      '',
      '# Title',
      '**Tags**: #delegated-fix',
      '```',
      '~~~',
      'text #needs-x',
      '- item',
      '    code',
      '> quote',
      '---',
    ),
  );
  const matter = fc.constantFrom('', '---\ndepends_on: [z.md]\n---\n', '---\ndepends_on: 1\n---\n');
  const document = fc
    .tuple(matter, fc.array(line, { minLength: 1, maxLength: 10 }))
    .map(([m, lines]) => m + lines.join('\n') + '\n');

  it('find the same entries in every text the fast path decides', () => {
    let decided = 0;
    let found = 0;
    fc.assert(
      fc.property(document, (text) => {
        const fast = scanTagsFast(text);
        if (!fast) return;
        decided++;
        const expected = dependsOnOf(scanTagsWithRemark(text));
        expect(dependsOnOf(fast), JSON.stringify(text)).toEqual(expected);
        if (expected.length > 0) found++;
      }),
      { numRuns: 1500, seed: 20261126 },
    );
    // A property over texts with no entries would pass vacuously.
    expect(decided).toBeGreaterThan(300);
    expect(found).toBeGreaterThan(200);
  });
});
