import { describe, expect, it } from 'vitest';
import { TagMissingError } from '../../src/tags/edit-tags.js';
import {
  claimEdit,
  lastPriorSession,
  recoveryCount,
  requeueEdit,
  sessionReference,
} from '../../src/tags/lifecycle-edits.js';

const entry = {
  date: '2026-11-22T07:00:00.000Z',
  reason: 'agent pid 1 is gone',
  priorSession: 'sessions/s1/',
  attempt: 1,
};

describe('claimEdit', () => {
  it('swaps #delegated-X to #claimed-X and writes the Session line below the Tags line, in one edit', () => {
    const text = '# T\r\n**Tags**: #delegated-fix #P1\r\n\r\nBody `#delegated-fix`\r\n';
    expect(sessionReference(claimEdit(text, 'fix', 'sessions/s1'))).toBe('sessions/s1');
    expect(claimEdit(text, 'fix', 'sessions/s1')).toBe(
      '# T\r\n**Tags**: #claimed-fix #P1\r\n**Session**: sessions/s1\r\n\r\nBody `#delegated-fix`\r\n',
    );
  });

  it('replaces an older Session line instead of adding a second', () => {
    const text = '# T\n**Tags**: #delegated-fix\n**Session**: sessions/old\n';
    expect(claimEdit(text, 'fix', 'sessions/new')).toBe(
      '# T\n**Tags**: #claimed-fix\n**Session**: sessions/new\n',
    );
  });

  it('refuses when the item is not delegated', () => {
    expect(() => claimEdit('# T\n**Tags**: #claimed-fix\n', 'fix', 's')).toThrow(TagMissingError);
    expect(() => claimEdit('# T\n**Tags**: #needs-fix\n', 'fix', 's')).toThrow(TagMissingError);
  });

  it('claims from front matter and adds a Tags line to hold the Session line', () => {
    const claimed = claimEdit('---\ntags: [delegated-fix]\n---\n# T\n', 'fix', 'sessions/s1');
    expect(claimed).toContain('tags: [claimed-fix]');
    expect(sessionReference(claimed)).toBe('sessions/s1');
  });
});

describe('requeueEdit', () => {
  const claimed = '# T\n**Tags**: #claimed-fix #P1\n**Session**: sessions/s1\n\nBody\n';

  it('swaps back to #needs-X, drops the Session line and appends one ## Recovery entry', () => {
    const text = requeueEdit(claimed, 'fix', 'sessions/s1', entry);
    expect(text).toBe(
      [
        '# T',
        '**Tags**: #needs-fix #P1',
        '',
        'Body',
        '',
        '## Recovery',
        '*   **Date**: 2026-11-22T07:00:00.000Z',
        '*   **Reason**: agent pid 1 is gone',
        '*   **Prior Session**: sessions/s1/',
        '*   **Action**: Re-queued for processing (back to #needs-fix, approve again to retry)',
        '*   **Attempt**: 1',
        '',
      ].join('\n'),
    );
    expect(recoveryCount(text)).toBe(1);
    expect(lastPriorSession(text)).toBe('sessions/s1/');
  });

  it('refuses unless the file is still claimed by that very session', () => {
    expect(() => requeueEdit(claimed, 'fix', 'sessions/other', entry)).toThrow(TagMissingError);
    expect(() =>
      requeueEdit(
        '# T\n**Tags**: #done-fix\n**Session**: sessions/s1\n',
        'fix',
        'sessions/s1',
        entry,
      ),
    ).toThrow(TagMissingError);
  });
});
