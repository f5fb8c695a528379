/**
 * The index keeps a file's occurrences packed as integers in a string (indexed-file.ts TagNames):
 * what it gives back is what it was given, each tag name one string of its own, and only the
 * occurrences asked for.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TagNames, tagNumbersOf, type IndexedOccurrence } from '../../src/index/indexed-file.js';

const occurrences: IndexedOccurrence[] = [
  { tag: '#needs-review', line: 2, column: 11, place: 'tags-line' },
  { tag: '#P1', line: 2, column: 25, place: 'tags-line' },
  { tag: '#needs-review', line: 70_000, column: 65_600, place: 'prose' },
  { tag: '#done-docs', line: 1, column: 8, place: 'front-matter' },
];

describe('packed occurrences', () => {
  it('unpack to the occurrences packed, in their order', () => {
    const names = new TagNames();
    expect(names.unpack(names.pack(occurrences))).toEqual(occurrences);
    expect(names.unpack(names.pack([]))).toEqual([]);
    // More units than one String.fromCharCode call takes.
    const many = Array.from({ length: 5000 }, (_, i) => ({
      ...occurrences[i % 4]!,
      line: i * 977,
    }));
    expect(names.unpack(names.pack(many))).toEqual(many);
  });

  it('are three integers each, one code unit for each under 32,768, a tag numbered once', () => {
    const names = new TagNames();
    const packed = names.pack(occurrences);
    // 70,000 and 65,600 take two units each.
    expect(packed).toHaveLength(14);
    const again = names.pack([{ tag: '#needs-review', line: 9, column: 1, place: 'prose' }]);
    expect(again).toHaveLength(3);
    expect(again[0]).toBe(packed[6]);
  });

  it('unpack what was packed, at any line and column and in any number', () => {
    const occurrence = fc.record({
      tag: fc.constantFrom('#needs-review', '#P1', '#done-docs', '#x'),
      line: fc.oneof(fc.nat(40_000), fc.nat(2 ** 31)),
      column: fc.oneof(fc.nat(40_000), fc.nat(2 ** 31)),
      place: fc.constantFrom('tags-line' as const, 'front-matter' as const, 'prose' as const),
    });
    fc.assert(
      fc.property(fc.array(occurrence, { maxLength: 3000 }), (list) => {
        const names = new TagNames();
        expect(names.unpack(names.pack(list))).toEqual(list);
      }),
      { numRuns: 60 },
    );
  });

  it('unpack the occurrences kept, and no others, whichever tags and places are kept', () => {
    // Small lines and columns, the same integers as tags' heads: each is read as what it is.
    const tags = Array.from({ length: 12 }, (_, i) => `#t${i}`);
    const occurrence = fc.record({
      tag: fc.constantFrom(...tags),
      line: fc.oneof(fc.nat(50), fc.nat(2 ** 31)),
      column: fc.oneof(fc.nat(50), fc.nat(2 ** 31)),
      place: fc.constantFrom('tags-line' as const, 'front-matter' as const, 'prose' as const),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(occurrence, { maxLength: 20 }), { minLength: 1, maxLength: 20 }),
        fc.subarray(tags),
        fc.boolean(),
        (files, kept, proseToo) => {
          const names = new TagNames();
          for (const tag of tags) names.numberOf(tag);
          const keep = (tag: string, place: string) =>
            kept.includes(tag) && (proseToo || place !== 'prose');
          const packed = files.map((list) => names.pack(list));
          const unpack = names.unpacker(keep);
          packed.forEach((one, i) => {
            const want = files[i]!.filter((o) => keep(o.tag, o.place));
            expect(unpack(one) ?? []).toEqual(want);
            expect(unpack(one) === null).toBe(want.length === 0);
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('give the tags numbered past 8,191 back too, whose heads take two code units', () => {
    const names = new TagNames();
    for (let i = 0; i < 8200; i++) names.numberOf(`#t${i}`);
    const late: IndexedOccurrence[] = [
      { tag: '#t8199', line: 3, column: 40_000, place: 'prose' },
      { tag: '#t1', line: 1, column: 1, place: 'tags-line' },
      { tag: '#t8192', line: 70_000, column: 2, place: 'front-matter' },
    ];
    const packed = names.pack(late);
    // 8,199 * 4 + 2 and 8,192 * 4 + 1 take two units each, as do 40,000 and 70,000.
    expect(packed).toHaveLength(13);
    expect(names.unpack(packed)).toEqual(late);
    expect(names.unpack(packed, (tag) => tag === '#t8192')).toEqual([late[2]]);
    const numbers: number[] = [];
    tagNumbersOf(packed, (n) => numbers.push(n));
    expect(numbers).toEqual([8199, 1, 8192]);
  });

  it('unpack only the occurrences kept', () => {
    const names = new TagNames();
    const packed = names.pack(occurrences);
    const kept = names.unpack(packed, (tag, place) => tag === '#needs-review' && place !== 'prose');
    expect(kept).toEqual([occurrences[0]]);
  });
});
