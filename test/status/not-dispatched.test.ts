/**
 * The files `engine status` names as never dispatched, and why: a pure function of one file's
 * scan and the work read from it.
 */
import { describe, expect, it } from 'vitest';
import type { DispatchRoute } from '../../src/dispatch/dispatch-table.js';
import { workItemsOf } from '../../src/dispatch/work-items.js';
import { lookalikeOf, notDispatchedIn } from '../../src/status/not-dispatched.js';
import { needsOfFile } from '../../src/status/needs-you.js';
import { recoveryRecords } from '../../src/tags/recovery-entries.js';
import { scanTags } from '../../src/tags/scan-tags.js';

const ROUTES: Record<string, DispatchRoute> = {
  fix: { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true },
  manual: {
    noun: 'manual',
    skill: '/manual',
    mode: 'interactive',
    priority: 6,
    dispatchable: false,
  },
};

function findings(text: string) {
  const { occurrences } = scanTags(text);
  const work = workItemsOf('/p/R.md', occurrences, (noun) => ROUTES[noun] ?? null, {
    readyAt: 0,
  });
  const lastRecovery = recoveryRecords(text).at(-1);
  return { file: '/p/R.md', text, occurrences, work, lastRecovery, names: 1 };
}

const reasons = (text: string) =>
  notDispatchedIn(findings(text)).map(({ tags, line, reason }) => ({ tags, line, reason }));

describe('lookalikeOf', () => {
  it('names the lifecycle tag a misspelled one was meant to be', () => {
    expect(lookalikeOf('#delegate-fix')).toBe('#delegated-fix');
    expect(lookalikeOf('#claim-fix')).toBe('#claimed-fix');
    expect(lookalikeOf('#need-docs')).toBe('#needs-docs');
    expect(lookalikeOf('#deligated-fix')).toBe('#delegated-fix');
    expect(lookalikeOf('#Delegated-Fix')).toBe('#delegated-fix');
  });

  it('leaves lifecycle tags, and tags close to none, alone', () => {
    for (const tag of ['#delegated-fix', '#needs-x', '#P1', '#M', '#node-x', '#review-fix', '#dx'])
      expect(lookalikeOf(tag), tag).toBeNull();
  });
});

describe('notDispatchedIn', () => {
  it('a dispatchable #delegated-X on the Tags line: nothing to say', () => {
    expect(reasons('# R\n**Tags**: #delegated-fix #P1\n')).toEqual([]);
  });

  it('a misspelled lifecycle tag on the Tags line, with the one meant', () => {
    expect(reasons('# R\n**Tags**: #delegate-fix\n')).toEqual([
      {
        tags: ['#delegate-fix'],
        line: 2,
        reason: expect.stringMatching(
          /^#delegate-fix is no lifecycle tag.*did you mean #delegated-fix\?$/,
        ),
      },
    ]);
  });

  it('a plain Tags: line (and **Tags:**, and a second Tags line) is prose', () => {
    for (const line of [
      'Tags: #delegated-fix',
      '**Tags:** #delegated-fix',
      '  **Tags**: #delegated-fix',
    ])
      expect(reasons(`# R\n${line}\n`), line).toEqual([
        {
          tags: ['#delegated-fix'],
          line: 2,
          reason: expect.stringMatching(/^line 2 is not the Tags line/),
        },
      ]);
    expect(reasons('# R\n**Tags**: #P1\n**Tags**: #delegated-fix\n')).toEqual([
      {
        tags: ['#delegated-fix'],
        line: 3,
        reason: expect.stringMatching(/^line 3 is a second Tags line/),
      },
    ]);
  });

  it('an inline #delegated-X in prose is no item; an inline #needs-X is an approval', () => {
    const text = '# R\n\n1. fix the typo #delegated-fix\n2. and this #needs-fix\n';
    expect(reasons(text)).toEqual([
      {
        tags: ['#delegated-fix'],
        line: 3,
        reason: expect.stringMatching(/at line 3 is in prose, no item/),
      },
    ]);
    expect(needsOfFile(findings(text)).map((n) => n.kind)).toEqual(['approval', 'not-dispatched']);
  });

  it('two states of one noun, and a #delegated-X with no row or a Daemon-no row', () => {
    expect(reasons('# R\n**Tags**: #done-fix #delegated-fix\n')).toEqual([
      {
        tags: ['#done-fix', '#delegated-fix'],
        line: null,
        reason: expect.stringMatching(/two lifecycle states of one noun/),
      },
    ]);
    expect(reasons('# R\n**Tags**: #delegated-nosuch #delegated-manual\n')).toEqual([
      {
        tags: ['#delegated-nosuch'],
        line: null,
        reason: expect.stringMatching(/has no row in §TAG_DISPATCH/),
      },
      {
        tags: ['#delegated-manual'],
        line: null,
        reason: expect.stringMatching(/row says Daemon no/),
      },
    ]);
  });
});

describe('a file with more than one name', () => {
  it('is never dispatched (a claim would leave the other names to run it again)', () => {
    const text = '# R\n**Tags**: #delegated-fix\n';
    expect(notDispatchedIn({ ...findings(text), names: 2 })).toEqual([
      {
        file: '/p/R.md',
        tags: ['#delegated-fix'],
        line: null,
        reason: expect.stringMatching(/^it has 2 names \(hard links\)/),
      },
    ]);
    expect(notDispatchedIn({ ...findings('# R\n**Tags**: #needs-fix\n'), names: 2 })).toEqual([]);
  });
});

describe('needsOfFile', () => {
  const entry = (to: string) =>
    `\n## Recovery\n*   **Reason**: it failed; gave up after 3 attempts\n*   **Action**: Re-queued for processing (back to \`${to}\`, approve again to retry)\n`;

  it('a #needs-X the last Recovery entry sent back to a human is given up, with its reason', () => {
    expect(needsOfFile(findings(`# R\n**Tags**: #needs-fix\n${entry('#needs-fix')}`))).toEqual([
      {
        kind: 'given-up',
        file: '/p/R.md',
        tag: '#needs-fix',
        noun: 'fix',
        title: 'R',
        reason: 'it failed; gave up after 3 attempts',
      },
    ]);
  });

  it('a #needs-X without such an entry waits for approval', () => {
    expect(needsOfFile(findings('# R\n**Tags**: #needs-fix\n'))).toEqual([
      {
        kind: 'approval',
        file: '/p/R.md',
        tag: '#needs-fix',
        noun: 'fix',
        title: 'R',
        line: 2,
        place: 'tags-line',
        lineText: '**Tags**: #needs-fix',
      },
    ]);
    // The last entry sent another noun back.
    expect(
      needsOfFile(findings(`# R\n**Tags**: #needs-fix\n${entry('#needs-docs')}`))[0]?.kind,
    ).toBe('approval');
  });
});
