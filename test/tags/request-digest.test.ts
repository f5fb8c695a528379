import { describe, expect, it } from 'vitest';
import { normalisedRequest, requestDigest } from '../../src/tags/request-digest.js';
import { addTag, swapTags } from '../../src/tags/edit-tags.js';
import { claimEdit, requeueEdit } from '../../src/tags/lifecycle-edits.js';

const SESSION = 'sessions/2026_11_24_030000_FIX_x_abcd';

/** Claim, requeue with a Recovery entry, approve again: what the next claim reads. */
function afterRequeue(text: string, attempt = 1): string {
  const claimed = claimEdit(text, 'fix', `${SESSION}${attempt}`);
  const requeued = requeueEdit(claimed, 'fix', `${SESSION}${attempt}`, {
    date: '2026-11-24T03:00:00.000Z',
    reason: 'agent exited with code 1 without marking #done-fix',
    priorSession: `${SESSION}${attempt}/`,
    attempt,
  });
  return swapTags(requeued, ['#needs-fix'], '#delegated-fix');
}

const BODY =
  '# Fix login\n**Tags**: #delegated-fix\n\nThe login fails.\n\n```md\n## Recovery\n**Session**: sessions/example\n```\n';

describe('the request digest', () => {
  it('is the same after claims, requeues with Recovery entries and a new approval', () => {
    const twice = afterRequeue(afterRequeue(BODY), 2);
    expect(twice).toContain('## Recovery');
    expect(normalisedRequest(twice)).toBe(normalisedRequest(BODY));
    expect(requestDigest(twice)).toBe(requestDigest(BODY));
    // The claimed text, Session line and all, reads the same too.
    expect(requestDigest(claimEdit(BODY, 'fix', SESSION))).toBe(requestDigest(BODY));
  });

  it('ignores tags added to the Tags line, CRLF line ends and trailing blank lines', () => {
    expect(requestDigest(addTag(BODY, '#P0') as string)).toBe(requestDigest(BODY));
    expect(requestDigest(BODY.replace(/\n/g, '\r\n'))).toBe(requestDigest(BODY));
    expect(requestDigest(`${BODY}\n\n`)).toBe(requestDigest(BODY));
  });

  it('ignores front matter tags, and a Session line written as a paragraph of its own', () => {
    const fm = '---\ntitle: x\ntags:\n  - delegated-fix\n---\n# Fix\n\nBody text.\n';
    const claimed = claimEdit(fm, 'fix', SESSION);
    expect(claimed).toContain(`**Session**: ${SESSION}\n\n`);
    expect(requestDigest(claimed)).toBe(requestDigest(fm));
    expect(requestDigest(afterRequeue(fm))).toBe(requestDigest(fm));
    const more = fm.replace('  - delegated-fix\n', '  - delegated-fix\n  - P0\n');
    expect(requestDigest(more)).toBe(requestDigest(fm));
    expect(normalisedRequest(fm)).toBe('---\ntitle: x\ntags:\n---\n# Fix\n\nBody text.');
  });

  it('changes when the body changes, also inside code, and for a human line that is no claim', () => {
    const other = [
      BODY.replace('fails.', 'fails on Sundays.'),
      BODY.replace('## Recovery\n', '## Recovery!\n'),
      BODY.replace('sessions/example', 'sessions/other'),
      BODY.replace('The login', '**Session**: cookie expires\n\nThe login'),
      `${BODY}\n## Notes\nTry again.\n`,
      // Text a human adds after a Recovery section is no Recovery entry.
      `${afterRequeue(BODY)}\nAlso check the logout.\n`,
    ];
    for (const text of other) expect(requestDigest(text), text).not.toBe(requestDigest(BODY));
  });
});
