import { describe, expect, it } from 'vitest';
import { scanTagsFast } from '../../src/tags/scan-fast.js';
import { scanTagsWithRemark } from '../../src/tags/scan-remark.js';
import { scanTags } from '../../src/tags/scan-tags.js';

const tags = (text: string) =>
  scanTags(text).occurrences.map((o) => `${o.tag}@${o.line}:${o.place}`);

describe('scanTags', () => {
  it('finds tags on the Tags line and in prose', () => {
    expect(tags('# T\n**Tags**: #needs-fix #P1\n\nDo it #needs-x\n')).toEqual([
      '#needs-fix@2:tags-line',
      '#P1@2:tags-line',
      '#needs-x@4:prose',
    ]);
  });

  it('ignores references in inline code', () => {
    expect(tags('`#needs-x` and ``#needs-y``\n')).toEqual([]);
  });
});

/** A Recovery entry as requeues wrote it before its fields quoted tags. */
const OLD_ENTRY = [
  '## Recovery',
  '*   **Date**: 2026-11-22T07:45:12.000Z',
  '*   **Reason**: agent exited with code 0 without marking #done-fix',
  '*   **Prior Session**: sessions/2026_11_22_074500_FIX_login_3f9a/',
  '*   **Action**: Re-queued for processing (back to #needs-fix, approve again to retry)',
  '*   **Attempt**: 1',
];

describe("engine's own record lines", () => {
  const both = (text: string) => {
    const expected = tags(text);
    expect(
      scanTagsWithRemark(text).occurrences.map((o) => `${o.tag}@${o.line}:${o.place}`),
    ).toEqual(expected);
    return expected;
  };

  it("are no tags: an old Recovery entry's Reason and Action lines carry none, in both locators", () => {
    const text = ['# T', '**Tags**: #needs-fix', '', 'Body #P1', '', ...OLD_ENTRY, ''].join('\n');
    expect(scanTagsFast(text)).not.toBeNull();
    expect(both(text)).toEqual(['#needs-fix@2:tags-line', '#P1@4:prose']);
    // remark decides a file the fast path declines (a table) the same way.
    const table = `${text}\n| a | b |\n|---|---|\n| #x | y |\n`;
    expect(scanTagsFast(table)).toBeNull();
    expect(both(table)).toEqual(['#needs-fix@2:tags-line', '#P1@4:prose', '#x@15:prose']);
  });

  it('only the fields engine writes, and only under a Recovery heading, up to the next heading', () => {
    const text = [
      '# T',
      ...OLD_ENTRY,
      '*   **Note**: waiting for #needs-design',
      'A line of the entry #a',
      '## Notes',
      '*   **Reason**: a human list #b',
      '',
    ].join('\n');
    expect(both(text)).toEqual(['#needs-design@8:prose', '#a@9:prose', '#b@11:prose']);
  });
});
