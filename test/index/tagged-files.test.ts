/**
 * The index's files with tags and its lists of the files holding each tag asked for
 * (src/index/tagged-files.ts): whatever was written and asked in whatever order, a question
 * reaches every file holding one of its tags, once, and no other while its tags are listed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TagNames, tagNumbersOf } from '../../src/index/indexed-file.js';
import { TaggedFiles } from '../../src/index/tagged-files.js';

const TAGS = Array.from({ length: 24 }, (_, i) => `#t${i}`);

function packOf(names: TagNames, tags: readonly number[]): string {
  return names.pack(
    tags.map((t, i) => ({ tag: TAGS[t]!, line: i + 1, column: 3, place: 'prose' as const })),
  );
}

/** The files holding one of `numbers` in a plain model, sorted. */
function holding(model: Map<string, string>, numbers: readonly number[]): string[] {
  const wanted = new Set(numbers);
  const files: string[] = [];
  for (const [file, packed] of model) {
    let held = false;
    tagNumbersOf(packed, (n) => (held ||= wanted.has(n)));
    if (held) files.push(file);
  }
  return files.sort();
}

/** What forEachHolding visited that holds one of `numbers`, sorted; and every visit, counted. */
function visited(files: TaggedFiles, numbers: readonly number[]): [string[], Map<string, number>] {
  const visits = new Map<string, number>();
  const wanted = new Set(numbers);
  const held: string[] = [];
  files.forEachHolding(numbers, (packed, file) => {
    visits.set(file, (visits.get(file) ?? 0) + 1);
    let holds = false;
    tagNumbersOf(packed, (n) => (holds ||= wanted.has(n)));
    if (holds) held.push(file);
  });
  return [held.sort(), visits];
}

describe('TaggedFiles', () => {
  it('reaches the files holding the tags asked for, once each, through any writes', () => {
    const file = fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `/r/f${i}.md`));
    const tags = fc.array(fc.nat(TAGS.length - 1), { minLength: 1, maxLength: 4 });
    const step = fc.oneof(
      fc.record({ op: fc.constant('set' as const), file, tags }),
      fc.record({ op: fc.constant('delete' as const), file }),
      fc.record({
        op: fc.constant('ask' as const),
        numbers: fc.uniqueArray(fc.nat(TAGS.length - 1), { minLength: 1, maxLength: 3 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const names = new TagNames();
        // Numbered in TAGS' order: a number is its index.
        for (const tag of TAGS) names.numberOf(tag);
        const files = new TaggedFiles();
        const model = new Map<string, string>();
        for (const s of steps) {
          if (s.op === 'set') {
            const packed = packOf(names, s.tags);
            files.set(s.file, packed);
            model.set(s.file, packed);
          } else if (s.op === 'delete') {
            expect(files.delete(s.file)).toBe(model.delete(s.file));
          } else {
            // Few files and tags: every tag asked is listed, and only its files are visited.
            const [held, visits] = visited(files, s.numbers);
            expect(held).toEqual(holding(model, s.numbers));
            expect([...visits.keys()].sort()).toEqual(held);
            expect([...visits.values()].every((n) => n === 1)).toBe(true);
          }
          expect(files.size).toBe(model.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('goes through every file for a tag held by too many to list, and for a wide question', () => {
    const names = new TagNames();
    for (const tag of TAGS) names.numberOf(tag);
    const files = new TaggedFiles();
    for (let i = 0; i < 5000; i++) files.set(`/r/f${i}.md`, packOf(names, i % 2 ? [0] : [1]));
    const [held, visits] = visited(files, [0]);
    expect(held).toHaveLength(2500);
    expect(visits.size).toBe(5000);
    const wide = Array.from({ length: 9 }, (_, i) => i + 2);
    expect(visited(files, wide)[1].size).toBe(5000);
  });

  it('stays exact as a listed tag comes to be held by too many to list', () => {
    const names = new TagNames();
    for (const tag of TAGS) names.numberOf(tag);
    const files = new TaggedFiles();
    for (let i = 0; i < 3000; i++) files.set(`/r/f${i}.md`, packOf(names, i < 2000 ? [0] : [1]));
    files.set('/r/two.md', packOf(names, [2]));
    // Listed: only its files are visited.
    expect(visited(files, [0])[1].size).toBe(2000);
    expect(visited(files, [2])[1].size).toBe(1);
    // Past 2,048 by single writes: no longer listed, and every file is visited.
    for (let i = 2000; i < 2100; i++) files.set(`/r/f${i}.md`, packOf(names, [0, 2]));
    const [held, visits] = visited(files, [0]);
    expect(held).toHaveLength(2100);
    expect(visits.size).toBe(3001);
    // One tag listed, one not: still every file holding either.
    expect(visited(files, [2, 0])[0]).toHaveLength(2101);
    expect(visited(files, [2])[0]).toHaveLength(101);
  });

  it('visits only the files holding a listed tag', () => {
    const names = new TagNames();
    for (const tag of TAGS) names.numberOf(tag);
    const files = new TaggedFiles();
    for (let i = 0; i < 1000; i++) files.set(`/r/f${i}.md`, packOf(names, i % 100 ? [1] : [0, 1]));
    visited(files, [0]);
    files.set('/r/new.md', packOf(names, [2, 0]));
    const [held, visits] = visited(files, [0]);
    expect(held).toHaveLength(11);
    expect(visits.size).toBe(11);
  });
});
