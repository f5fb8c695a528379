/** Human output within 80 columns: wrapping, short paths, relative times. */
import { describe, expect, it } from 'vitest';
import { relativeTime, shortPath, wrap } from '../../src/cli/fit-width.js';

describe('fit-width', () => {
  it('wraps at spaces with a hanging indent, and cuts a word longer than a line', () => {
    const lines = wrap(`one two  ${'x'.repeat(100)} three`, '  ', '    ', 20);
    expect(lines.every((l) => l.length <= 20)).toBe(true);
    expect(lines[0]).toBe('  one two');
    expect(lines.join('').replace(/\s+/g, '')).toBe(`onetwo${'x'.repeat(100)}three`);
    expect(wrap('a  b', '', '', 80)).toEqual(['a  b']);
  });

  it('shows a path relative to the root, and a long one by its end', () => {
    expect(shortPath('/r', '/r/sessions/A.md')).toBe('sessions/A.md');
    expect(shortPath('/r', '/elsewhere/A.md')).toBe('/elsewhere/A.md');
    const long = shortPath('/r', `/r/sessions/${'d'.repeat(80)}/A.md`, 30);
    expect(long).toHaveLength(30);
    expect(long).toMatch(/^….*\/A\.md$/);
  });

  it('says times relative to now', () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    expect(relativeTime('2026-11-26T09:57:00.000Z', now)).toBe('3 min ago');
    expect(relativeTime('2026-11-26T10:00:12.000Z', now)).toBe('in 12 s');
    expect(relativeTime(now.getTime(), now)).toBe('just now');
    expect(relativeTime('2026-11-26T05:00:00.000Z', now)).toBe('5 h ago');
    expect(relativeTime('2026-11-22T10:00:00.000Z', now)).toBe('4 d ago');
  });
});
