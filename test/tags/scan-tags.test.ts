import { describe, expect, it } from 'vitest';
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
