/**
 * The postcondition behind proseText: a requeue whose entry would add a tag is refused, nothing
 * written. proseText is replaced by the identity here, the one way to get such an entry.
 */
import { describe, expect, it, vi } from 'vitest';
import { EditChangesMeaningError } from '../../src/tags/edit-tags.js';
import { claimEdit, requeueEdit } from '../../src/tags/lifecycle-edits.js';

vi.mock('../../src/tags/engine-prose.js', () => ({
  proseText: (value: string) => value,
  codeSpan: (value: string) => `\`${value}\``,
}));

describe('requeueEdit without proseText', () => {
  it('refuses an entry that would add a tag to the file', () => {
    const claimed = claimEdit('# T\n**Tags**: #delegated-fix\n\nBody\n', 'fix', 'sessions/s1');
    const entry = {
      date: 'now',
      priorSession: 'sessions/s1/',
      attempt: 1,
      reason: 'gone\n\nsee #done-fix',
    };
    expect(() => requeueEdit(claimed, 'fix', 'sessions/s1', entry)).toThrow(
      EditChangesMeaningError,
    );
  });
});
