/**
 * The walk names each entry as join(dir, name) would, from a prefix made once a directory: the
 * same path for every directory a caller gives (relative, `.`, `..`, repeated or trailing
 * separators, the root) and every name a listing can hold.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entryPrefix } from '../../src/tags/walk-markdown.js';

const segment = fc.constantFrom('.', '..', '', 'a', 'sessions', 'b c', 'é', '.git', 'x.md');
const dir = fc
  .tuple(fc.boolean(), fc.array(segment, { maxLength: 6 }), fc.boolean())
  .map(
    ([absolute, parts, trailing]) =>
      `${absolute ? '/' : ''}${parts.join('/')}${trailing ? '/' : ''}`,
  );
// What readdir can name: no separator, not `.` or `..`.
const name = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 12 })
  .map((text) => text.replaceAll('/', '_').replaceAll('\0', '_'))
  .filter((text) => text !== '.' && text !== '..');

describe('entryPrefix', () => {
  it('prefix + name is join(dir, name)', () => {
    for (const [d, n] of [
      ['.', 'a.md'],
      ['/', 'a.md'],
      ['', 'a.md'],
      ['./sessions/', 'a.md'],
      ['../x/../y', '...'],
    ] as const) {
      expect(entryPrefix(d) + n).toBe(join(d, n));
    }
    fc.assert(
      fc.property(dir, name, (d, n) => {
        expect(entryPrefix(d) + n).toBe(join(d, n));
      }),
      { numRuns: 2000 },
    );
  });
});
