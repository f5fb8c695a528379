import { describe, expect, it } from 'vitest';
import type { DispatchRoute } from '../../src/dispatch/dispatch-table.js';
import { twoStatesProblem, workItemsOf } from '../../src/dispatch/work-items.js';
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
      '**Tags**: #delegated-fix #delegated-none #claimed-live #P1',
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
    expect(work.claims).toEqual([{ noun: 'live', done: false }]);
    expect(work.twoStates).toEqual([]);
  });

  it('dispatches nothing of a file with two states of one noun, and keeps its claims', () => {
    const text =
      '# T\n**Tags**: #done-fix #delegated-fix #claimed-old #done-old #delegated-x #P1\n';
    const work = workItemsOf('/r/T.md', scanTags(text).occurrences, route, { readyAt: 0 });
    expect(work.twoStates).toEqual([
      { noun: 'fix', tags: ['#done-fix', '#delegated-fix'] },
      { noun: 'old', tags: ['#claimed-old', '#done-old'] },
    ]);
    expect(work.delegated).toEqual([]);
    expect(work.items).toEqual([]);
    expect(work.claims).toEqual([{ noun: 'old', done: true }]);
    expect(twoStatesProblem(work.twoStates[0]!)).toMatch(
      /^it holds #done-fix #delegated-fix on its Tags line or front matter, two lifecycle states of one noun/,
    );
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
