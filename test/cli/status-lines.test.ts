/**
 * The human `engine status` fits an 80-column terminal whatever the names: a long root, long
 * paths, long reasons and questions, a long table path outside the root.
 */
import { describe, expect, it } from 'vitest';
import { linesOnce, statusLines, WAITING_SHOWN } from '../../src/cli/status-lines.js';
import type { ClaimItem, StatusReport } from '../../src/status/collect-status.js';

const NOW = new Date('2026-11-26T10:00:00.000Z');
const ROOT = `/home/someone/${'projects-with-long-names/'.repeat(6)}shop`;
const LONG = `${ROOT}/sessions/${'deep/'.repeat(12)}${'a-request-with-a-long-name-'.repeat(5)}.md`;
const WORDS = 'a reason that goes on and on '.repeat(8).trim();
const UNBROKEN = 'x'.repeat(150);

const claim: ClaimItem = {
  file: LONG,
  noun: 'implementation-of-a-long-noun',
  session: `sessions/2026_11_26_093000_IMPLEMENTATION_${'long-'.repeat(10)}abcd`,
  status: 'running',
  attempt: 3,
  pid: 1234567,
  alive: true,
  liveness: `on host ${'far-away-host-'.repeat(5)}, last heartbeat 2026-11-26T09:59:58.000Z`,
  pane: '%123',
  startedAt: '2026-11-26T09:30:00.000Z',
  ageSeconds: 1800,
  lastHeartbeat: '2026-11-26T09:59:58.000Z',
  agentSessionId: '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0',
  agentState: {
    state: 'waiting',
    event: 'Notification',
    at: '2026-11-26T09:58:00.000Z',
    detail: WORDS,
  },
};

const report: StatusReport = {
  root: ROOT,
  paths: [`${ROOT}/sessions`],
  next: [{ file: LONG, tag: '#next-implementation-of-a-long-noun', noun: 'x', title: WORDS }],
  daemon: {
    state: 'other-host',
    pid: 4242,
    host: 'far-away-host-'.repeat(5),
    since: null,
    stalePid: null,
  },
  paused: {
    until: '2026-11-26T10:12:00.000Z',
    reason: WORDS,
    since: '2026-11-26T09:00:00.000Z',
    probe: { file: LONG, noun: 'fix', since: '2026-11-26T09:00:00.000Z' },
  },
  needsYou: [
    {
      kind: 'input',
      file: LONG,
      noun: 'fix',
      session: null,
      since: '2026-11-26T09:58:00.000Z',
      question: UNBROKEN,
    },
    { kind: 'given-up', file: LONG, tag: '#needs-fix', noun: 'fix', title: WORDS, reason: WORDS },
    {
      kind: 'approval',
      file: LONG,
      tag: '#needs-fix',
      noun: 'fix',
      title: UNBROKEN,
      line: 12,
      place: 'prose',
      lineText: 'x #needs-fix',
    },
    { kind: 'not-dispatched', file: LONG, tags: ['#delegate-fix'], reason: WORDS, line: 2 },
  ],
  waiting: Array.from({ length: WAITING_SHOWN + 3 }, (_, i) => ({
    file: `${LONG}${i}`,
    noun: 'implementation-of-a-long-noun',
    skill: '/implement-a-long-skill',
    weight: 2,
    tablePriority: 4,
    aged: i === 0,
    wait:
      i === 1
        ? {
            kind: 'blocked' as const,
            by: [
              { kind: 'pending' as const, pattern: LONG, file: LONG, states: ['#claimed-fix'] },
              { kind: 'missing' as const, pattern: `${LONG}/*.md` },
            ],
          }
        : { kind: 'paused' as const, until: null, probe: LONG },
  })),
  running: [claim],
  stale: [{ ...claim, alive: false, liveness: WORDS }],
  done: [
    {
      event: 'exited',
      file: LONG,
      noun: 'fix',
      session: 'sessions/s',
      time: '2026-11-26T09:00:00.000Z',
      reason: WORDS,
      agentSessionId: null,
      result: {
        terminalReason: 'api_error',
        isError: true,
        numTurns: 12,
        costUsd: 0.5,
        durationMs: 1000,
        apiErrorStatus: 529,
        sessionId: null,
      },
    },
  ],
  doneMore: 7,
};

describe('statusLines', () => {
  it('keeps every line within 80 columns, and says how many more of each cut list', () => {
    const lines = statusLines(
      report,
      { path: `/opt/${'engine/'.repeat(15)}TAGS.md`, shipped: true },
      NOW,
    );
    expect(
      lines.filter((line) => line.length > 80),
      lines.join('\n'),
    ).toEqual([]);
    const text = lines.join('\n');
    expect(text).toContain('  … and 3 more (engine status --json lists them all)');
    expect(text).toMatch(/^ {2}… and 7 more$/m);
    expect(text).toContain('Paused (lifts in 12 min)');
    // Where it looked: a list empty for want of the right paths says so.
    expect(text).toContain('Requests read under sessions/');
    expect(text).toContain('whether it runs cannot be told from this host');
    // Nothing is lost in wrapping: the unbroken question is all there.
    expect(text.replace(/\s+/g, '')).toContain(UNBROKEN);
  });
});

describe('linesOnce', () => {
  it('renders a frozen item once per root, and a plain one every time', () => {
    let renders = 0;
    const render = (item: { file: string }): string[] => [`${item.file} ${++renders}`];
    const frozen = Object.freeze({ file: 'a.md' });
    expect(linesOnce(frozen, { root: '/p' }, render)).toEqual(['a.md 1']);
    // The daemon's status answer: an unchanged file's item is a lookup.
    expect(linesOnce(frozen, { root: '/p' }, render)).toEqual(['a.md 1']);
    // Its paths are shown from the root: another root renders it again.
    expect(linesOnce(frozen, { root: '/q' }, render)).toEqual(['a.md 2']);
    const plain = { file: 'b.md' };
    expect(linesOnce(plain, { root: '/p' }, render)).toEqual(['b.md 3']);
    expect(linesOnce(plain, { root: '/p' }, render)).toEqual(['b.md 4']);
  });

  it('gives the text a report of frozen items gives unfrozen', () => {
    const shown = { path: `${ROOT}/directives/TAGS.md`, shipped: false };
    const plain = statusLines(report, shown, NOW).join('\n');
    const frozen = {
      ...report,
      needsYou: report.needsYou.map((n) => Object.freeze({ ...n })),
      next: report.next.map((n) => Object.freeze({ ...n })),
    };
    expect(statusLines(frozen, shown, NOW).join('\n')).toBe(plain);
    expect(statusLines(frozen, shown, NOW).join('\n')).toBe(plain);
  });
});
