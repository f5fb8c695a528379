/**
 * The index keeps a file's occurrences packed as integers (indexed-file.ts TagNames): what it
 * gives back is what it was given, each tag name one string of its own, and only the occurrences
 * asked for.
 */
import { describe, expect, it } from 'vitest';
import { TagNames, type IndexedOccurrence } from '../../src/index/indexed-file.js';

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
  });

  it('are three integers each, a tag name numbered once for all files', () => {
    const names = new TagNames();
    const packed = names.pack(occurrences);
    expect(packed).toHaveLength(12);
    expect(packed.every((n) => Number.isInteger(n))).toBe(true);
    const again = names.pack([{ tag: '#needs-review', line: 9, column: 1, place: 'prose' }]);
    expect(again[0]).toBe(packed[6]);
  });

  it('unpack only the occurrences kept', () => {
    const names = new TagNames();
    const packed = names.pack(occurrences);
    const kept = names.unpack(packed, (tag, place) => tag === '#needs-review' && place !== 'prose');
    expect(kept).toEqual([occurrences[0]]);
  });
});
