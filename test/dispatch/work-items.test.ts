import { describe, expect, it } from 'vitest';
import type { DispatchRoute } from '../../src/dispatch/dispatch-table.js';
import { workItemsOf } from '../../src/dispatch/work-items.js';
import { scanTags } from '../../src/tags/scan-tags.js';
import { parseTagPattern } from '../../src/tags/tag-name.js';

const row = (noun: string, priority: number, dispatchable = true): DispatchRoute => ({
  noun,
  skill: `/${noun}`,
  mode: 'agent',
  priority,
  dispatchable,
});
const table = new Map([
  ['fix', row('fix', 3)],
  ['manual', row('manual', 6, false)],
]);
const route = (noun: string) => table.get(noun) ?? null;

describe('workItemsOf', () => {
  it('gives the delegated tags of the Tags line and front matter, with their rows, and the claims', () => {
    const text = [
      '---',
      'tags: [delegated-manual]',
      '---',
      '# T',
      '**Tags**: #delegated-fix #delegated-none #claimed-old #done-old #claimed-live #P1',
      '',
      'Prose #delegated-prose is not an item, nor `#delegated-code`.',
    ].join('\n');
    const work = workItemsOf('/r/T.md', scanTags(text).occurrences, route, { readyAt: 7 });
    expect(work.weight).toBe(1);
    expect(work.delegated).toEqual([
      { noun: 'manual', route: row('manual', 6, false) },
      { noun: 'fix', route: row('fix', 3) },
      { noun: 'none', route: null },
    ]);
    expect(work.items).toEqual([
      { file: '/r/T.md', noun: 'fix', skill: '/fix', weight: 1, tablePriority: 3, readyAt: 7 },
    ]);
    expect(work.claims).toEqual([
      { noun: 'old', done: true },
      { noun: 'live', done: false },
    ]);
  });

  it('keeps only the tags the monitored patterns select', () => {
    const text = '# T\n**Tags**: #delegated-fix #delegated-manual\n';
    const work = workItemsOf('/r/T.md', scanTags(text).occurrences, route, {
      patterns: [parseTagPattern('#delegated-man*')],
      readyAt: 0,
    });
    expect(work.delegated.map((d) => d.noun)).toEqual(['manual']);
    expect(work.items).toEqual([]);
  });
});
