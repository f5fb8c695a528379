import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addTag, removeTag, swapTags, TagMissingError } from '../../src/tags/edit-tags.js';
import { scanFrontMatter } from '../../src/tags/front-matter.js';
import { scanTags } from '../../src/tags/scan-tags.js';

const found = (text: string): string[] =>
  scanTags(text).occurrences.map(
    (o) => `${o.tag}@${o.line}:${o.place}${o.bare ? ':bare' : ''}=${text.slice(o.start, o.end)}`,
  );

describe('front matter tags key', () => {
  it('should read a flow list with and without #', () => {
    expect(found('---\ntags: [needs-a, "#P1"]\n---\n# T\n')).toEqual([
      '#needs-a@2:front-matter:bare=needs-a',
      '#P1@2:front-matter=#P1',
    ]);
  });

  it('should read a block list with plain, double- and single-quoted entries', () => {
    expect(found('---\ntags:\n  - needs-a\n  - "#P1"\n  - \'#P2\'\n---\n')).toEqual([
      '#needs-a@3:front-matter:bare=needs-a',
      '#P1@4:front-matter=#P1',
      '#P2@5:front-matter=#P2',
    ]);
  });

  it('should read a quoted string of space-separated tags', () => {
    expect(found('---\ntags: "#needs-a #P1"\n---\n')).toEqual([
      '#needs-a@2:front-matter=#needs-a',
      '#P1@2:front-matter=#P1',
    ]);
  });

  it('should read a plain string of comma-separated names', () => {
    expect(found('---\ntags: needs-a, P1\n---\n')).toEqual([
      '#needs-a@2:front-matter:bare=needs-a',
      '#P1@2:front-matter:bare=P1',
    ]);
  });

  it('should read a block scalar', () => {
    expect(found('---\ntags: |\n  needs-a\n  P1\n---\n')).toEqual([
      '#needs-a@3:front-matter:bare=needs-a',
      '#P1@4:front-matter:bare=P1',
    ]);
  });

  it('should read a bare entry that YAML reads as a number', () => {
    expect(found('---\ntags: [2024, 2fa-review]\n---\n')).toEqual([
      '#2024@2:front-matter:bare=2024',
      '#2fa-review@2:front-matter:bare=2fa-review',
    ]);
  });

  it('should read front matter with CRLF line endings', () => {
    expect(found('---\r\ntags: [needs-a]\r\n---\r\n# T\r\n')).toEqual([
      '#needs-a@2:front-matter:bare=needs-a',
    ]);
  });

  it('should read front matter without a final newline', () => {
    expect(found('---\ntags: [a]\n---')).toEqual(['#a@2:front-matter:bare=a']);
  });

  it('should not read an unquoted #name, which YAML reads as a comment', () => {
    expect(found('---\ntags: #needs-a\n---\n')).toEqual([]);
  });

  it('should not read entries that are not whole tag names', () => {
    expect(found('---\ntags: [needs_fix, é-x, needs-fixé, "a#b"]\n---\n')).toEqual([]);
  });

  it('should not read booleans and nulls', () => {
    expect(found('---\ntags: [true, null, ~]\n---\n')).toEqual([]);
  });

  it('should not read a nested tags key', () => {
    expect(found('---\nother:\n  tags: [a]\n---\n')).toEqual([]);
  });

  it('should not read other keys', () => {
    expect(found('---\ntitle: "#needs-a"\nlabels: [needs-b]\n---\n')).toEqual([]);
  });

  it('should not read front matter that is not at the top of the file', () => {
    expect(found('text\n\n---\ntags: [a]\n---\n')).toEqual([]);
  });

  it('should report the end of the front matter block', () => {
    expect(scanTags('---\ntags: [a]\n---\n# T\n').frontMatterEnd).toBe(18);
    expect(scanTags('---\r\na: 1\r\n---\r\n').frontMatterEnd).toBe(16);
    expect(scanTags('+++\ntitle = "x"\n+++\nbody\n').frontMatterEnd).toBe(20);
    expect(scanTags('# T\n').frontMatterEnd).toBeNull();
  });

  it('should not read tags from TOML front matter', () => {
    expect(found('+++\ntags = ["needs-a"]\n+++\n')).toEqual([]);
  });

  it('should not treat prose-looking text inside front matter as prose tags', () => {
    expect(found('---\ndescription: "see #needs-a"\n---\n')).toEqual([]);
  });

  it('should count front matter tags and the Tags line together', () => {
    expect(found('---\ntags: [a]\n---\n# T\n**Tags**: #b\n')).toEqual([
      '#a@2:front-matter:bare=a',
      '#b@5:tags-line=#b',
    ]);
  });
});

describe('malformed front matter', () => {
  it.each([
    ['an unclosed flow list', '---\ntags: [a: b\n---\nbody #x\n'],
    ['a nested compact mapping', '---\n: : :\n  - x\n---\nbody #x\n'],
    ['a tab indentation', '---\ntags:\n\t- a\n---\nbody #x\n'],
    ['an unclosed quote', '---\ntags: "a\n---\nbody #x\n'],
  ])('should report %s as a problem and still scan the body', (_label, text) => {
    const scan = scanTags(text);
    expect(scan.problems).toHaveLength(1);
    expect(scan.problems[0]?.message).toMatch(/^front matter is not valid YAML, so its tags/);
    // The line is the file's, inside the front matter.
    expect(scan.problems[0]?.line).toBeGreaterThanOrEqual(2);
    expect(scan.problems[0]?.line).toBeLessThanOrEqual(3);
    expect(scan.occurrences.map((o) => `${o.tag}:${o.place}`)).toEqual(['#x:prose']);
  });

  it('should name the line of the YAML error in the file', () => {
    const scan = scanTags('---\ntitle: x\nowner: y\ntags:\n\t- a\n---\n# T\n');
    expect(scan.problems).toEqual([
      { line: 5, message: expect.stringMatching(/^front matter is not valid YAML/) as unknown },
    ]);
    expect(scan.problems[0]?.message).not.toMatch(/at line/);
  });

  it.each([
    ['a map', '---\ntitle: x\ntags:\n  a: b\n---\n# T\n', 4],
    ['a map inside the list', '---\ntags:\n  - needs-a\n  - x: y\n---\n# T\n', 4],
  ])('should report a tags: holding %s, on its line', (_label, text, line) => {
    const scan = scanTags(text);
    expect(scan.problems.map((p) => p.line)).toEqual([line]);
    expect(scan.problems[0]?.message).toMatch(/not read as tags/);
  });

  // The yaml package read the first of two `tags:` keys, PyYAML reads the last: a file whose state
  // tools disagree on, read silently (found by a walk). Its dependencies still hold the item.
  it('should report `tags:` written twice, on its second line, and read neither', () => {
    const text = '---\ntags: [P1]\ndepends_on: a.md\ntags: [delegated-fix]\n---\nbody #x\n';
    const scan = scanTags(text);
    expect(scan.problems).toEqual([
      { line: 4, message: 'front matter has `tags:` more than once, so its tags are not read' },
    ]);
    expect(scan.occurrences.map((o) => `${o.tag}:${o.place}`)).toEqual(['#x:prose']);
    expect(scan.frontMatterDependsOn).toEqual(['a.md']);
    expect(scanTags('---\ntitle: a\ntitle: b\ntags: [needs-a]\n---\n').problems).toEqual([]);
  });

  it('should read every `depends_on:` key: an item waits for all of them', () => {
    const scan = scanTags('---\ndepends_on: a.md\ntags: [needs-a]\ndepends_on: [b.md]\n---\n');
    expect(scan.problems).toEqual([]);
    expect(scan.frontMatterDependsOn).toEqual(['a.md', 'b.md']);
    expect(scan.occurrences.map((o) => o.tag)).toEqual(['#needs-a']);
  });

  it('should report no problem for valid front matter', () => {
    expect(scanTags('---\ntags: [a]\n---\n').problems).toEqual([]);
  });

  it('should not throw on front matter that is only fences', () => {
    expect(scanTags('---\n---\n# T\n').problems).toEqual([]);
  });

  it('should give no tags, and no exception, for scanFrontMatter on malformed YAML', () => {
    const text = '---\n{ [ : ] }}\n---\n';
    expect(() => scanFrontMatter(text, 0, text.length - 1)).not.toThrow();
    expect(scanFrontMatter(text, 0, text.length - 1).tags).toEqual([]);
  });
});

describe('---js front matter', () => {
  let dir: string;
  const globals = globalThis as unknown as Record<string, unknown>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-fm-'));
    delete globals.__engineFrontMatterRan;
  });

  afterEach(async () => {
    delete globals.__engineFrontMatterRan;
    await rm(dir, { recursive: true, force: true });
  });

  const hostile = (marker: string): string =>
    [
      '---js',
      '{',
      `  tags: [require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned'), '#needs-a'],`,
      '  ran: (globalThis.__engineFrontMatterRan = true),',
      '}',
      '---',
      '# Title',
      '**Tags**: #delegated-fix',
      '',
    ].join('\n');

  it('should scan a file with ---js front matter without running its code', () => {
    const marker = join(dir, 'pwned.txt');
    const scan = scanTags(hostile(marker));
    expect(existsSync(marker)).toBe(false);
    expect(globals.__engineFrontMatterRan).toBeUndefined();
    expect(scan.occurrences.filter((o) => o.place !== 'prose').map((o) => o.tag)).toEqual([
      '#delegated-fix',
    ]);
  });

  it('should edit a file with ---js front matter without running its code', () => {
    const marker = join(dir, 'pwned.txt');
    const text = hostile(marker);
    const swapped = swapTags(text, ['#delegated-fix'], '#claimed-fix');
    expect(swapped).toBe(text.replace('#delegated-fix', '#claimed-fix'));
    expect(addTag(text, '#P1')).toBe(text.replace('#delegated-fix', '#delegated-fix #P1'));
    expect(removeTag(text, '#delegated-fix')).toBe(text.replace(' #delegated-fix', ''));
    expect(existsSync(marker)).toBe(false);
    expect(globals.__engineFrontMatterRan).toBeUndefined();
  });
});

describe('front matter edits', () => {
  it('should remove the first entry of a flow list with its comma', () => {
    expect(removeTag('---\ntags: [a, b]\n---\n', '#a')).toBe('---\ntags: [b]\n---\n');
  });

  it('should remove the last entry of a flow list with its comma', () => {
    expect(removeTag('---\ntags: [a, b]\n---\n', '#b')).toBe('---\ntags: [a]\n---\n');
  });

  it('should remove a middle entry of a flow list', () => {
    expect(removeTag('---\ntags: [a, b, c]\n---\n', '#b')).toBe('---\ntags: [a, c]\n---\n');
  });

  it('should remove the only entry of a flow list', () => {
    expect(removeTag('---\ntags: [a]\n---\n', '#a')).toBe('---\ntags: []\n---\n');
  });

  it('should remove a quoted entry with its quotes', () => {
    expect(removeTag('---\ntags: ["#a", "#b"]\n---\n', '#a')).toBe('---\ntags: ["#b"]\n---\n');
  });

  it('should remove a block list entry with its whole line', () => {
    expect(removeTag('---\ntags:\n  - a\n  - "#b"\n---\n', '#b')).toBe('---\ntags:\n  - a\n---\n');
  });

  it('should remove a block list entry with its whole CRLF line', () => {
    expect(removeTag('---\r\ntags:\r\n  - a\r\n  - b\r\n---\r\n', '#a')).toBe(
      '---\r\ntags:\r\n  - b\r\n---\r\n',
    );
  });

  it('should remove a tag from a quoted string of tags', () => {
    expect(removeTag('---\ntags: "#a #b"\n---\n', '#a')).toBe('---\ntags: "#b"\n---\n');
    expect(removeTag('---\ntags: "#a #b"\n---\n', '#b')).toBe('---\ntags: "#a"\n---\n');
  });

  it('should remove a name from a comma-separated string', () => {
    expect(removeTag('---\ntags: a, b, c\n---\n', '#b')).toBe('---\ntags: a, c\n---\n');
  });

  it('should remove every duplicate of a tag', () => {
    expect(removeTag('---\ntags: [a, b, a]\n---\n', '#a')).toBe('---\ntags: [b]\n---\n');
    expect(removeTag('---\ntags: [a, a]\n---\n', '#a')).toBe('---\ntags: []\n---\n');
  });

  it('should remove a tag from both the front matter and the Tags line', () => {
    expect(removeTag('---\ntags: [a]\n---\n# T\n**Tags**: #a #b\n', '#a')).toBe(
      '---\ntags: []\n---\n# T\n**Tags**: #b\n',
    );
  });

  it('should keep a bare entry bare and a #-entry with its # when swapping', () => {
    expect(swapTags('---\ntags: [needs-a, "#P1"]\n---\n', ['#needs-a'], '#done-a')).toBe(
      '---\ntags: [done-a, "#P1"]\n---\n',
    );
    expect(swapTags('---\ntags: ["#needs-a", P1]\n---\n', ['#needs-a'], '#done-a')).toBe(
      '---\ntags: ["#done-a", P1]\n---\n',
    );
  });

  it('should swap a block list entry in place', () => {
    expect(
      swapTags('---\ntags:\n  - delegated-fix\n  - P1\n---\n', ['#delegated-fix'], '#claimed-fix'),
    ).toBe('---\ntags:\n  - claimed-fix\n  - P1\n---\n');
  });

  it('should swap two present old tags into one new tag', () => {
    expect(
      swapTags('---\ntags: [needs-a, claimed-a]\n---\n', ['#needs-a', '#claimed-a'], '#done-a'),
    ).toBe('---\ntags: [done-a]\n---\n');
  });

  it('should not write the new tag twice when it is already in the front matter', () => {
    expect(swapTags('---\ntags: [needs-a, done-a]\n---\n', ['#needs-a'], '#done-a')).toBe(
      '---\ntags: [done-a]\n---\n',
    );
  });

  it('should refuse a swap when the old tag is only in prose', () => {
    expect(() => swapTags('---\ntags: [b]\n---\nbody #needs-a\n', ['#needs-a'], '#done-a')).toThrow(
      TagMissingError,
    );
  });

  it('should not add a tag already carried by the front matter', () => {
    expect(addTag('---\ntags: [a]\n---\n# T\n', '#a')).toBeNull();
  });

  it('should add to a Tags line, never into the front matter', () => {
    expect(addTag('---\ntags: [a]\n---\n# T\n', '#b')).toBe(
      '---\ntags: [a]\n---\n# T\n**Tags**: #b\n',
    );
  });

  it('should leave malformed front matter alone and return null when removing', () => {
    const text = '---\ntags: [a\n---\n# T\n';
    expect(removeTag(text, '#a')).toBeNull();
  });
});
