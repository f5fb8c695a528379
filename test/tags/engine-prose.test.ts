/**
 * Text engine writes into a request file never holds a tag: a Recovery entry's reason (which
 * quotes tags, paths and error messages) and the Worktree line's path and branch, whatever they
 * hold. Checked by both locators, remark's (CommonMark) and the fast path's, and by requeue and
 * the Worktree line as a whole.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codeSpan, proseText } from '../../src/tags/engine-prose.js';
import { claimEdit, lastPriorSession, requeueEdit } from '../../src/tags/lifecycle-edits.js';
import { recoveryRecords } from '../../src/tags/recovery-entries.js';
import { scanTagsWithRemark } from '../../src/tags/scan-remark.js';
import { scanTags } from '../../src/tags/scan-tags.js';
import { worktreeLineEdit } from '../../src/worktrees/worktree-line.js';

const RUNS = { numRuns: 800, seed: 20261201 };

/** Words and characters that mean something in markdown, and tags of every kind. */
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...'#`~*_-\\&;[]()<>!|:=\'"\n\r \t aA1é'.split('')) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '#done-fix',
      '#needs-fix',
      '#delegated-fix,',
      '(#P1)',
      '`#done-fix`',
      '``',
      '```',
      '<!--',
      '-->',
      '<a title="',
      '">',
      '<https://x.com/#needs-a>',
      'https://x.com/?q=#needs-b',
      '&#35;needs-c',
      '\\#needs-d',
      '[x](#needs-e)',
      '**#needs-f**',
      '_#needs-g_',
      'C#',
      '#',
      '##',
      '# ',
      '\n## Recovery\n',
      '\n*   **Failure**: launch\n',
      '\n    ',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const hostile = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''));

/** Every tag both locators find in `text`. */
function tagsIn(text: string): string[] {
  const fast = scanTags(text).occurrences.map((o) => `${o.line}:${o.tag}`);
  const remark = scanTagsWithRemark(text).occurrences.map((o) => `${o.line}:${o.tag}`);
  return [...new Set([...fast, ...remark])];
}

describe('proseText', () => {
  it('puts every word that holds a tag in a code span, keeping the punctuation around it', () => {
    expect(proseText('agent exited with code 0 without marking #done-fix')).toBe(
      'agent exited with code 0 without marking `#done-fix`',
    );
    expect(proseText('Re-queued for processing (back to #needs-fix, approve again to retry)')).toBe(
      'Re-queued for processing (back to `#needs-fix`, approve again to retry)',
    );
    expect(proseText('works on #fix of\nsessions/a #b.md')).toBe(
      'works on `#fix` of sessions/a `#b.md`',
    );
  });

  it('leaves text without # or backticks as it is, on one line', () => {
    expect(proseText('usage limit, resets at 2026-11-24T10:15:00.000Z')).toBe(
      'usage limit, resets at 2026-11-24T10:15:00.000Z',
    );
    expect(proseText(' spawn failed:\r\n  no tmux\there ')).toBe('spawn failed: no tmux here');
  });

  it('never yields a tag, whatever the text, in a paragraph, a list item or a heading', () => {
    fc.assert(
      fc.property(hostile, fc.constantFrom('Text: ', '*   **Note**: ', '## '), (value, lead) => {
        const out = proseText(value);
        expect(out).not.toMatch(/[\r\n]/);
        expect(tagsIn(`# T\n\n${lead}${out}\n`), JSON.stringify(value)).toEqual([]);
      }),
      RUNS,
    );
  });
});

describe('codeSpan', () => {
  it('fences a value holding backticks with a longer run, padded where it starts with one', () => {
    expect(codeSpan('a`b')).toBe('``a`b``');
    expect(codeSpan('`#x')).toBe('`` `#x ``');
    expect(codeSpan('')).toBe('` `');
    expect(codeSpan('a\nb')).toBe('`a\uFFFDb`');
  });

  it('never yields a tag, whatever the value', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        expect(tagsIn(`# T\n\nPath ${codeSpan(value)} here #P1\n`)).toEqual(['3:#P1']);
      }),
      RUNS,
    );
  });
});

describe('the Recovery entry and the Worktree line', () => {
  const claimed = claimEdit('# T\n**Tags**: #delegated-fix #P1\n\nBody\n', 'fix', 'sessions/s1');

  it('a requeue quotes its reason: the entry adds no tag, read as prose anywhere', () => {
    fc.assert(
      fc.property(
        hostile,
        fc.constantFrom('needs', 'delegated') as fc.Arbitrary<'needs'>,
        (reason, back) => {
          const requeued = requeueEdit(claimed, 'fix', 'sessions/s1', {
            date: '2026-11-22T07:00:00.000Z',
            reason,
            priorSession: 'sessions/s1/',
            attempt: 1,
            back,
            failure: 'agent',
          });
          expect(recoveryRecords(requeued)).toHaveLength(1);
          expect(lastPriorSession(requeued)).toBe('sessions/s1/');
          // Under any other heading the entry is plain prose: still no tag in it.
          const plain = requeued.replace('## Recovery', '## Notes');
          expect(tagsIn(plain), JSON.stringify(reason)).toEqual([`2:#${back}-fix`, '2:#P1']);
        },
      ),
      RUNS,
    );
  });

  it('writes the entry of an agent that exited without marking done with the tag in code', () => {
    const requeued = requeueEdit(claimed, 'fix', 'sessions/s1', {
      date: '2026-11-22T07:00:00.000Z',
      reason: 'agent exited with code 0 without marking #done-fix',
      priorSession: 'sessions/s1/',
      attempt: 1,
    });
    expect(requeued).toContain(
      '*   **Reason**: agent exited with code 0 without marking `#done-fix`\n',
    );
    expect(requeued).toContain(
      '*   **Action**: Re-queued for processing (back to `#needs-fix`, approve again to retry)\n',
    );
    expect(scanTags(requeued).occurrences.map((o) => o.tag)).toEqual(['#needs-fix', '#P1']);
  });

  it('the Worktree line holds no tag, whatever its path and branch', () => {
    fc.assert(
      fc.property(hostile, hostile, (path, branch) => {
        const text = worktreeLineEdit(claimed, { path, branch }) as string;
        expect(tagsIn(text), JSON.stringify([path, branch])).toEqual(['2:#claimed-fix', '2:#P1']);
        expect(worktreeLineEdit(text, { path, branch })).toBeNull();
      }),
      RUNS,
    );
  });
});
