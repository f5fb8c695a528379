import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approvalItemsIn, contextLines, titleOf } from '../../src/approve/approval-items.js';
import {
  formatSummary,
  reviewItems,
  type Decision,
  type ReviewIO,
  type ReviewStep,
} from '../../src/approve/review-items.js';
import { scanTags } from '../../src/tags/scan-tags.js';

function itemsOf(text: string, path = 'r.md') {
  return approvalItemsIn(path, text, scanTags(text).occurrences);
}

describe('approvalItemsIn', () => {
  it('lists Tags line, front matter and inline #needs-X items in file order', () => {
    const text = [
      '---',
      'tags: [needs-review]',
      '---',
      '# Title',
      '**Tags**: #needs-fix #P1 #delegated-x',
      '',
      '1. Do a #needs-chores thing',
      '2. Not `#needs-code` in code, nor #needs_x, nor #needs-Fix',
      '',
      'A paragraph #needs-docs and #needs-docs again.',
    ].join('\n');
    expect(
      itemsOf(text).map(({ tag, noun, line, place, title }) => ({ tag, noun, line, place, title })),
    ).toEqual([
      { tag: '#needs-review', noun: 'review', line: 2, place: 'front-matter', title: 'Title' },
      { tag: '#needs-fix', noun: 'fix', line: 5, place: 'tags-line', title: 'Title' },
      { tag: '#needs-chores', noun: 'chores', line: 7, place: 'prose', title: 'Title' },
      { tag: '#needs-docs', noun: 'docs', line: 10, place: 'prose', title: 'Title' },
    ]);
  });

  it('counts a tag on both the Tags line and in front matter once (one swap changes both)', () => {
    const text = '---\ntags: [needs-fix]\n---\n# T\n**Tags**: #needs-fix\n';
    expect(itemsOf(text).map((i) => [i.tag, i.place])).toEqual([['#needs-fix', 'front-matter']]);
  });
});

describe('titleOf', () => {
  it('takes the first level-1 heading, ATX or setext', () => {
    expect(titleOf('# Fix the parser #\nbody', 'x.md')).toBe('Fix the parser');
    expect(titleOf('intro\n\n## Sub\n\n# Real title\n', 'x.md')).toBe('Real title');
    expect(titleOf('Setext title\n===\n', 'x.md')).toBe('Setext title');
  });

  it('skips front matter, fenced code and HTML comments, and falls back to the file name', () => {
    expect(
      titleOf('---\ntitle: x\n---\n```\n# not it\n```\n<!--\n# nor this\n-->\n# It\n', 'a/x.md'),
    ).toBe('It');
    expect(titleOf('no heading here\n', 'dir/req.md')).toBe('req.md');
    expect(titleOf('#\n', 'dir/empty.md')).toBe('empty.md');
    expect(titleOf('#hashtag paragraph\n', 'dir/tag.md')).toBe('tag.md');
  });
});

describe('contextLines', () => {
  it('gives two lines either side, clipped to the file', () => {
    expect(contextLines('a\nb\nc\nd\ne\nf\n', 2)).toEqual([
      { line: 1, text: 'a' },
      { line: 2, text: 'b' },
      { line: 3, text: 'c' },
      { line: 4, text: 'd' },
    ]);
  });
});

describe('formatSummary', () => {
  it('counts on one line (not-changed and not-reviewed only when there are some), then each change', () => {
    const base = {
      approved: 1,
      next: 2,
      skipped: 3,
      dropped: 4,
      notChanged: 0,
      unreviewed: 0,
      changes: [],
    };
    expect(formatSummary(base)).toBe(
      'approved 1, next skill 2, skipped 3, dropped 4\nNo file changed.',
    );
    const changes = [
      { path: 'a.md', from: '#needs-fix', to: '#delegated-fix' },
      { path: 'b.md', from: '#needs-x', to: undefined },
    ];
    expect(formatSummary({ ...base, notChanged: 1, unreviewed: 2, changes })).toBe(
      'approved 1, next skill 2, skipped 3, dropped 4, not changed 1, not reviewed 2\n' +
        'Changed:\n  a.md: #needs-fix -> #delegated-fix\n  b.md: #needs-x -> (removed)',
    );
  });
});

describe('reviewItems', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-review-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The items of these files, listed in the main thread (the CLI tests cover the pool path). */
  async function listed(...files: string[]) {
    const items = [];
    for (const file of files) items.push(...itemsOf(await readFile(file, 'utf8'), file));
    return items;
  }

  function scripted(decisions: Decision[], onAsk?: (step: ReviewStep) => Promise<void>) {
    const reports: string[] = [];
    const shown: ReviewStep[] = [];
    let views = 0;
    const io: ReviewIO = {
      show: (step) => void shown.push(step),
      ask: async (step) => {
        await onAsk?.(step);
        const next = decisions.shift();
        if (!next) throw new Error('asked more often than scripted');
        return next;
      },
      view: () => void views++,
      report: (message) => void reports.push(message),
    };
    return { io, reports, shown, views: () => views };
  }

  it('applies each decision and follows inline items when a front matter line is removed', async () => {
    const file = join(dir, 'r.md');
    await writeFile(
      file,
      '---\ntags:\n  - needs-review\n---\n# R\n**Tags**: #needs-fix\n\n- a #needs-a\n- b #needs-b\n- c #needs-c\n',
    );
    const items = await listed(file);
    expect(items.map((i) => i.tag)).toEqual([
      '#needs-review',
      '#needs-fix',
      '#needs-a',
      '#needs-b',
      '#needs-c',
    ]);
    const { io, reports, shown, views } = scripted([
      'drop',
      'view',
      'approve',
      'next',
      'skip',
      'drop',
    ]);
    const summary = await reviewItems(items, io);
    expect(summary).toEqual({
      approved: 1,
      next: 1,
      skipped: 1,
      dropped: 2,
      notChanged: 0,
      unreviewed: 0,
      changes: [
        { path: file, from: '#needs-review', to: undefined },
        { path: file, from: '#needs-fix', to: '#delegated-fix' },
        { path: file, from: '#needs-a', to: '#next-a' },
        { path: file, from: '#needs-c', to: undefined },
      ],
    });
    expect(views()).toBe(1);
    // The inline items moved up one line when the front matter entry went.
    expect(shown.slice(2).map((s) => s.item.line)).toEqual([7, 8, 9]);
    expect(await readFile(file, 'utf8')).toBe(
      '---\ntags:\n---\n# R\n**Tags**: #delegated-fix\n\n- a #next-a\n- b #needs-b\n- c\n',
    );
    expect(reports).toContain('approved: #needs-fix -> #delegated-fix');
  });

  it('notes and skips an item changed by someone else meanwhile, and stops at quit', async () => {
    const a = join(dir, 'a.md');
    const b = join(dir, 'b.md');
    await writeFile(a, '# A\n**Tags**: #needs-fix\n');
    await writeFile(b, '# B\n**Tags**: #needs-fix\n');
    const items = await listed(a, b);
    const { io, reports } = scripted(['approve', 'quit'], async (step) => {
      // While the human looks at a.md, another process claims the item.
      if (step.item.path === a) await writeFile(a, '# A\n**Tags**: #delegated-fix\n');
    });
    const summary = await reviewItems(items, io);
    expect(summary).toMatchObject({ approved: 0, notChanged: 1, unreviewed: 1, changes: [] });
    expect(reports[0]).toMatch(/^not changed: None of '#needs-fix' found on Tags line of .*a\.md/);
    expect(await readFile(a, 'utf8')).toBe('# A\n**Tags**: #delegated-fix\n');
    expect(await readFile(b, 'utf8')).toBe('# B\n**Tags**: #needs-fix\n');
  });

  it('skips an item whose tag is gone by its turn without asking', async () => {
    const a = join(dir, 'a.md');
    await writeFile(a, '# A\n**Tags**: #needs-fix\n');
    const items = await listed(a);
    await writeFile(a, '# A\n**Tags**: #next-fix\n');
    const { io, reports } = scripted([]);
    expect(await reviewItems(items, io)).toMatchObject({ notChanged: 1 });
    expect(reports[0]).toMatch(/#needs-fix is no longer on the Tags line of/);
  });
});
