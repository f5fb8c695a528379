import { describe, expect, it } from 'vitest';
import { runningNote, type RunningItem } from '../../src/agents/running-note.js';

const item = (n: number, over: Partial<RunningItem> = {}): RunningItem => ({
  file: `sessions/item-${String(n).padStart(2, '0')}.md`,
  noun: 'fix',
  host: 'build-box',
  branch: null,
  ...over,
});

describe('the running-items note', () => {
  it('is null when nothing else runs', () => {
    expect(runningNote([])).toBeNull();
  });

  it('names file, noun, host and branch when known, sorted by host then file', () => {
    const note = runningNote([
      item(2, { host: 'laptop' }),
      item(1, { branch: 'engine/fix/item-01', noun: 'review' }),
    ]);
    expect(note).toBe(
      'Other items run now (2); leave their files and branches to their agents: ' +
        'sessions/item-01.md (noun review, host build-box, branch engine/fix/item-01); ' +
        'sessions/item-02.md (noun fix, host laptop).',
    );
  });

  it('is capped, saying how many more', () => {
    const note =
      runningNote(
        [1, 2, 3, 4, 5].map((n) => item(n)),
        3,
      ) ?? '';
    expect(note).toContain('(5)');
    expect(note).toContain('sessions/item-03.md');
    expect(note).not.toContain('sessions/item-04.md');
    expect(note).toMatch(/; and 2 more\.$/);
  });

  it('reads as no tag, and keeps no control character of another host record', () => {
    const note = runningNote([item(1, { host: 'evil\nhost\u001b[2J', noun: 'fix' })]) ?? '';
    expect(note).not.toMatch(/#\w/);
    expect(note).not.toContain('\n');
    expect(note).not.toContain('\u001b');
    expect(note).toContain('host evil?host?[2J');
  });
});
