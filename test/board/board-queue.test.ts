/**
 * The board with git claims (docs/MULTI-HOST.md, "What status and the board read"): the cards of
 * the daemon's checkout by their paths relative to the root, and the board saying which copy of
 * the requests it read.
 */
import { describe, expect, it } from 'vitest';
import { boardView, type ViewInputs } from '../../src/board/board-view.js';
import type { StatusReport } from '../../src/status/collect-status.js';

const NOW = new Date('2026-11-26T09:00:00.000Z');
const CHECKOUT = '/state/engine/checkouts/app-0123456789abcdef';

function report(over: Partial<StatusReport>): StatusReport {
  return {
    root: '/p',
    paths: [`${CHECKOUT}/sessions`],
    daemon: { state: 'running', pid: 7, host: 'h', since: null, stalePid: null },
    paused: null,
    needsYou: [],
    waiting: [
      {
        file: `${CHECKOUT}/sessions/a.md`,
        noun: 'fix',
        skill: '/fix',
        weight: 2,
        tablePriority: 3,
        aged: false,
        // A card that offers Retry now, from the human's tree.
        wait: { kind: 'not-before', until: '2026-11-26T10:00:00.000Z' },
      },
    ],
    next: [],
    running: [],
    stale: [],
    done: [],
    doneMore: 0,
    ...over,
  };
}

function inputs(r: StatusReport): ViewInputs {
  return {
    report: r,
    from: 'daemon',
    now: NOW,
    readOnly: false,
    idOf: ({ file, noun }) => `${file}|${noun}`,
    factsOf: () => null,
    tailOf: () => null,
  };
}

describe('the board with git claims', () => {
  it("shows the checkout's cards by their paths in the root, and says the shared branch was read", () => {
    const queue = {
      kind: 'checkout' as const,
      checkout: CHECKOUT,
      root: CHECKOUT,
      remote: 'origin',
      branch: 'main',
    };
    const board = boardView(inputs(report({ queue })));
    const card = board.lanes.find((lane) => lane.name === 'waiting')!.cards[0]!;
    expect(card.file).toBe('sessions/a.md');
    // An edit of the checkout's copy would be reset at the daemon's next sync.
    expect(card.actions).toEqual([]);
    expect(board.source).toContain('from the daemon. Queue: the shared branch origin main');
    expect(board.source).toContain(CHECKOUT);
  });

  it('says the working tree was read when no daemon of git claims runs', () => {
    const queue = { kind: 'working-tree' as const, remote: 'origin' };
    const waiting = report({}).waiting.map((w) => ({ ...w, file: '/p/sessions/a.md' }));
    const board = boardView(inputs(report({ queue, waiting, paths: ['/p/sessions'] })));
    expect(board.source).toContain('Queue: this working tree, not the shared branch on origin');
    const card = board.lanes.find((lane) => lane.name === 'waiting')!.cards[0]!;
    expect(card.file).toBe('sessions/a.md');
    expect(card.actions.map((a) => a.label)).toEqual(['Retry now']);
  });
});
