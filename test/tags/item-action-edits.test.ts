/**
 * The pure edits of `engine cancel` and `engine retry` (tags/lifecycle-edits.ts): a cancel is the
 * requeue of a human, to `#needs-X` with a `cancelled` entry, only while the session holds the
 * claim; a retry's entry ends what held the item (a Not Before) and is no attempt.
 */
import { describe, expect, it } from 'vitest';
import { readyAtOf } from '../../src/dispatch/work-order.js';
import { TagMissingError } from '../../src/tags/edit-tags.js';
import { cancelEdit, requeueEdit, retryEdit } from '../../src/tags/lifecycle-edits.js';
import { attemptsSoFar, recoveryRecords } from '../../src/tags/recovery-entries.js';
import { scanTags } from '../../src/tags/scan-tags.js';
import { transitionTags } from '../../src/tags/tag-name.js';

const SESSION = 'sessions/2026_11_26_010000_FIX_r_abcd';
const CLAIMED = `# R\n**Tags**: #claimed-fix #P1\n**Session**: ${SESSION}\n\nThe bug.\n`;
const NOW = new Date('2026-11-26T01:00:00.000Z');

function tagsOf(text: string): string[] {
  return scanTags(text).occurrences.map((o) => `${o.place} ${o.tag}`);
}

describe('the lifecycle table', () => {
  it('has the transitions of a human: cancel (claimed to needs) and retry (needs to delegated)', () => {
    expect(transitionTags('cancel', 'fix')).toEqual({ from: '#claimed-fix', to: '#needs-fix' });
    expect(transitionTags('retry', 'fix')).toEqual({ from: '#needs-fix', to: '#delegated-fix' });
  });
});

describe('cancelEdit', () => {
  it('sends the claim to #needs-X with a cancelled entry that is no attempt, and drops the Session line', () => {
    const text = cancelEdit(CLAIMED, 'fix', SESSION, NOW);
    expect(tagsOf(text)).toEqual(['tags-line #needs-fix', 'tags-line #P1']);
    expect(text).not.toContain('**Session**:');
    expect(text).toContain('*   **Reason**: cancelled\n');
    expect(text).toContain(
      '*   **Action**: Cancelled by hand (back to `#needs-fix`; engine retry, or an approval, dispatches it again)',
    );
    expect(text).toContain('*   **Failure**: cancelled (not an attempt)');
    expect(text).toContain(`*   **Prior Session**: ${SESSION}/`);
    expect(text).toContain('*   **Attempt**: 1');
    expect(attemptsSoFar(recoveryRecords(text))).toBe(0);
  });

  it('numbers its attempt after the attempts before it', () => {
    const once = requeueEdit(CLAIMED, 'fix', SESSION, {
      date: NOW.toISOString(),
      reason: 'agent exited',
      priorSession: `${SESSION}/`,
      attempt: 1,
      back: 'needs',
    });
    const again = once
      .replace('#needs-fix', '#claimed-fix')
      .replace('\n\nThe bug.', `\n**Session**: ${SESSION}2\n\nThe bug.`);
    expect(cancelEdit(again, 'fix', `${SESSION}2`, NOW)).toContain('*   **Attempt**: 2');
  });

  it("refuses a file no longer claimed by that session: another session's, or none", () => {
    expect(() => cancelEdit(CLAIMED, 'fix', `${SESSION}x`, NOW)).toThrow(TagMissingError);
    const human = '# R\n**Tags**: #claimed-fix\n';
    expect(() => cancelEdit(human, 'fix', SESSION, NOW)).toThrow(TagMissingError);
  });
});

describe('retryEdit', () => {
  const held = (notBefore: string) =>
    [
      '# R',
      '**Tags**: #delegated-fix',
      '',
      '## Recovery',
      '*   **Date**: 2026-11-26T00:00:00.000Z',
      '*   **Reason**: agent exited; retry 1 of 2',
      '*   **Failure**: agent',
      `*   **Not Before**: ${notBefore}`,
      '*   **Attempt**: 1',
      '',
    ].join('\n');

  it('is the plain approval for a #needs-X item without Recovery entries', () => {
    expect(retryEdit('# R\n**Tags**: #needs-fix\n', 'fix', NOW, false)).toBe(
      '# R\n**Tags**: #delegated-fix\n',
    );
  });

  it('adds an entry that is no attempt and clears the Not Before the readiness rule reads', () => {
    const text = held('2026-11-26T05:00:00.000Z');
    const lastOf = (t: string) => recoveryRecords(t).at(-1);
    expect(readyAtOf({ mtimeMs: 0, lastRecovery: lastOf(text) }, 0)).toBe(
      Date.parse('2026-11-26T05:00:00.000Z'),
    );
    const retried = retryEdit(text, 'fix', NOW, true);
    expect(tagsOf(retried)).toEqual(['tags-line #delegated-fix']);
    expect(lastOf(retried)).toEqual({
      failure: 'none',
      notBefore: null,
      reason: 'retried by hand (engine retry)',
      to: '#delegated-fix',
    });
    expect(readyAtOf({ mtimeMs: 0, lastRecovery: lastOf(retried) }, 0)).toBe(0);
    expect(attemptsSoFar(recoveryRecords(retried))).toBe(1);
    expect(retried).toContain('*   **Reason**: retried by hand (engine retry)');
    expect(retried).toContain(
      '*   **Action**: Back to `#delegated-fix` by a human, claimed without waiting for a backoff',
    );
  });

  it('swaps #needs-X and adds the entry to an item that has Recovery entries', () => {
    const text = held('2026-11-26T05:00:00.000Z').replace('#delegated-fix', '#needs-fix');
    const retried = retryEdit(text, 'fix', NOW, false);
    expect(tagsOf(retried)).toEqual(['tags-line #delegated-fix']);
    expect(recoveryRecords(retried)).toHaveLength(2);
  });

  it('refuses when the tag it expects is not there', () => {
    expect(() => retryEdit('# R\n**Tags**: #claimed-fix\n', 'fix', NOW, false)).toThrow(
      TagMissingError,
    );
    expect(() => retryEdit('# R\n**Tags**: #needs-fix\n', 'fix', NOW, true)).toThrow(
      TagMissingError,
    );
  });
});
