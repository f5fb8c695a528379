import { describe, expect, it } from 'vitest';
import { TagMissingError, TwoStatesError } from '../../src/tags/edit-tags.js';
import {
  claimEdit,
  lastPriorSession,
  requeueEdit,
  sessionReference,
} from '../../src/tags/lifecycle-edits.js';
import { attemptsSoFar, recoveryRecords } from '../../src/tags/recovery-entries.js';

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

  it('refuses a file with two lifecycle states of one noun, of any noun', () => {
    for (const tags of ['#done-fix #delegated-fix', '#delegated-fix #needs-docs #done-docs']) {
      expect(() => claimEdit(`# T\n**Tags**: ${tags}\n`, 'fix', 'sessions/s1')).toThrow(
        TwoStatesError,
      );
    }
  });

  it('refuses when the item is not delegated', () => {
    expect(() => claimEdit('# T\n**Tags**: #claimed-fix\n', 'fix', 's')).toThrow(TagMissingError);
    expect(() => claimEdit('# T\n**Tags**: #needs-fix\n', 'fix', 's')).toThrow(TagMissingError);
  });

  it('claims from front matter: the tag changes where it is, the Session line goes below the H1', () => {
    const claimed = claimEdit('---\ntags: [delegated-fix]\n---\n# T\n', 'fix', 'sessions/s1');
    expect(claimed).toBe('---\ntags: [claimed-fix]\n---\n# T\n**Session**: sessions/s1\n');
    expect(claimed).not.toContain('**Tags**');
  });

  it.each([
    ['an H1 and a blank line', '---\ntags: [delegated-fix]\n---\n# T\n\nBody #P1\n'],
    ['an H1 and text right below', '---\ntags: [delegated-fix]\n---\n# T\nBody\n'],
    ['no H1', '---\ntags:\n  - delegated-fix\n---\nBody\n\n    code\n'],
    ['no H1 and a blank line', '---\ntags: [delegated-fix]\n---\n\nBody\n'],
    ['CRLF and no final newline', '---\r\ntags: [delegated-fix]\r\n---\r\n# T'],
    ['nothing after the H1', '---\ntags: [delegated-fix]\n---\n# T\n'],
  ])('gives a front-matter-only file back as it was after claim and requeue (%s)', (_l, text) => {
    const claimed = claimEdit(text, 'fix', 'sessions/s1');
    expect(sessionReference(claimed)).toBe('sessions/s1');
    const requeued = requeueEdit(claimed, 'fix', 'sessions/s1', entry);
    const recovery = requeued.indexOf('## Recovery');
    const expected = text.replace('delegated-fix', 'needs-fix').replace(/(\r?\n)*$/, '');
    expect(requeued.slice(0, recovery).replace(/(\r?\n)*$/, '')).toBe(expected);
  });
});

describe('the daemon reads and edits only its own lines, never an example inside code', () => {
  const fenced = [
    '# T',
    '**Tags**: #claimed-fix',
    '',
    'Example:',
    '',
    '```markdown',
    '**Tags**: #claimed-fix',
    '**Session**: sessions/2026_01_01_000000_FIX_example_abcd/',
    '## Recovery',
    '*   **Prior Session**: sessions/old/',
    '```',
    '',
  ].join('\n');

  it('finds no Session line, Recovery heading or prior session inside a fence', () => {
    expect(sessionReference(fenced)).toBeNull();
    expect(attemptsSoFar(recoveryRecords(fenced))).toBe(0);
    expect(lastPriorSession(fenced)).toBeNull();
  });

  it('finds none in an indented code block, an HTML block or front matter either', () => {
    const text = [
      '---',
      'note: |',
      '  x',
      '---',
      '# T',
      '**Tags**: #claimed-fix',
      '',
      '<div>',
      '**Session**: sessions/html/',
      '</div>',
      '',
      '    **Session**: sessions/indented/',
      '',
    ].join('\n');
    expect(sessionReference(text)).toBeNull();
  });

  it('never requeues a claim by its example, and a claim leaves the fence byte for byte', () => {
    expect(() =>
      requeueEdit(fenced, 'fix', 'sessions/2026_01_01_000000_FIX_example_abcd/', entry),
    ).toThrow(TagMissingError);
    const delegated = fenced.replace('**Tags**: #claimed-fix\n\n', '**Tags**: #delegated-fix\n\n');
    const claimed = claimEdit(delegated, 'fix', 'sessions/real');
    expect(sessionReference(claimed)).toBe('sessions/real');
    const fence = fenced.slice(fenced.indexOf('```markdown'));
    expect(claimed.endsWith(fence)).toBe(true);
    const requeued = requeueEdit(claimed, 'fix', 'sessions/real', entry);
    expect(requeued).toContain(fence);
    expect(attemptsSoFar(recoveryRecords(requeued))).toBe(1);
    expect(lastPriorSession(requeued)).toBe('sessions/s1/');
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
        '*   **Action**: Re-queued for processing (back to `#needs-fix`, approve again to retry)',
        '*   **Attempt**: 1',
        '',
      ].join('\n'),
    );
    expect(attemptsSoFar(recoveryRecords(text))).toBe(1);
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

describe('found by review: the edits keep what they do not own', () => {
  it('requeues a claim whose Tags line also carries #needs-X, writing the tag once', () => {
    const text = '# T\n**Tags**: #claimed-fix #needs-fix\n**Session**: sessions/s1\n\nBody\n';
    const requeued = requeueEdit(text, 'fix', 'sessions/s1', entry);
    expect(requeued.startsWith('# T\n**Tags**: #needs-fix\n\nBody\n')).toBe(true);
    expect(sessionReference(requeued)).toBeNull();
  });

  it('claims a file carrying #delegated-X in front matter and on the Tags line', () => {
    const text = '---\ntags: [delegated-fix]\n---\n# T\n**Tags**: #delegated-fix\n';
    const claimed = claimEdit(text, 'fix', 'sessions/s1');
    expect(sessionReference(claimed)).toBe('sessions/s1');
    expect(claimed).not.toContain('delegated-fix');
  });

  it('never takes a human line that starts with **Session**: for the claim', () => {
    const text = '# T\n**Tags**: #delegated-fix\n\n**Session**: cookie expires after login\n';
    expect(sessionReference(text)).toBeNull();
    const claimed = claimEdit(text, 'fix', 'sessions/s1');
    expect(claimed).toContain('**Session**: cookie expires after login');
    const requeued = requeueEdit(claimed, 'fix', 'sessions/s1', entry);
    expect(requeued).toContain('**Session**: cookie expires after login');
    expect(requeued.startsWith(text.replace('#delegated-fix', '#needs-fix'))).toBe(true);
  });

  it('removes a stale second Session line along with the claim', () => {
    const text =
      '# T\n**Tags**: #claimed-fix\n**Session**: sessions/s1\n\n**Session**: sessions/old\n';
    expect(sessionReference(requeueEdit(text, 'fix', 'sessions/s1', entry))).toBeNull();
  });
});

describe('requeueEdit of a text that ends inside an open block', () => {
  const head = '# T\n**Tags**: #claimed-fix\n**Session**: sessions/s1\n\nIntro.\n\n';
  it.each([
    ['a code fence never closed', '```sh\nrun it\n\n\n'],
    ['a tilde fence never closed, CRLF', '~~~~\r\n## Recovery\r\n\r\n'],
    ['an HTML comment never closed', '<!-- notes\n\nmore\n\n'],
  ])('puts the entry right before %s, whose bytes stay, and it counts', (_l, open) => {
    const text = head + open;
    let requeued = requeueEdit(text, 'fix', 'sessions/s1', entry);
    expect(requeued.endsWith(open)).toBe(true);
    expect(attemptsSoFar(recoveryRecords(requeued))).toBe(1);
    // A second failure: the next entry, after the first, still before the block, and counted.
    requeued = claimEdit(requeued.replace('#needs-fix', '#delegated-fix'), 'fix', 'sessions/s2');
    requeued = requeueEdit(requeued, 'fix', 'sessions/s2', {
      ...entry,
      priorSession: 'sessions/s2/',
    });
    expect(requeued.endsWith(open)).toBe(true);
    expect(attemptsSoFar(recoveryRecords(requeued))).toBe(2);
    expect(lastPriorSession(requeued)).toBe('sessions/s2/');
  });

  it('keeps front matter first: the entry goes below it, before the open block', () => {
    const open = '```sh\necho hi\n';
    const text = `---\ntags: [claimed-fix]\n---\n**Session**: sessions/s1\n\n${open}`;
    const requeued = requeueEdit(text, 'fix', 'sessions/s1', entry);
    expect(requeued.startsWith('---\ntags: [needs-fix]\n---\n')).toBe(true);
    expect(requeued.endsWith(open)).toBe(true);
    expect(attemptsSoFar(recoveryRecords(requeued))).toBe(1);
  });

  it('still appends after a block that was closed', () => {
    const text = `${head}\`\`\`\ncode\n\`\`\`\n\n\n`;
    const requeued = requeueEdit(text, 'fix', 'sessions/s1', entry);
    expect(requeued).toMatch(/\ncode\n```\n\n## Recovery\n(?:[^`]|`#needs-fix`)*$/);
  });
});
