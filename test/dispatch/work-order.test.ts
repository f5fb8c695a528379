import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  agingOf,
  compareOrder,
  dispatchOrder,
  isAged,
  readiness,
  weightOf,
  type Wait,
} from '../../src/dispatch/work-order.js';

describe('dispatch order', () => {
  it('reads the weight from #P0/#P1, defaulting to P2', () => {
    expect(weightOf(['#delegated-x', '#P0'])).toBe(0);
    expect(weightOf(['#P1', '#P2'])).toBe(1);
    expect(weightOf(['#delegated-x'])).toBe(2);
  });

  it('orders by weight, then table priority, then first ready', () => {
    const items = [
      { id: 'p2-fix', weight: 2, tablePriority: 3, readyAt: 1 },
      { id: 'p0-chores', weight: 0, tablePriority: 5, readyAt: 5 },
      { id: 'p1-loop', weight: 1, tablePriority: 4.5, readyAt: 2 },
      { id: 'p1-impl-late', weight: 1, tablePriority: 4, readyAt: 9 },
      { id: 'p1-impl', weight: 1, tablePriority: 4, readyAt: 3 },
    ];
    expect([...items].sort(compareOrder).map((i) => i.id)).toEqual([
      'p0-chores',
      'p1-impl',
      'p1-impl-late',
      'p1-loop',
      'p2-fix',
    ]);
  });

  it('breaks a tie by file, then noun, whatever order the items came in', () => {
    const tie = (file: string, noun: string) => ({
      file,
      noun,
      weight: 2,
      tablePriority: 3,
      readyAt: 7,
      wait: null,
    });
    const items = [tie('/p/Y.md', 'fix'), tie('/p/X.md', 'fix'), tie('/p/X.md', 'docs')];
    const order = (list: typeof items) => dispatchOrder(list).map((i) => `${i.file} ${i.noun}`);
    const expected = ['/p/X.md docs', '/p/X.md fix', '/p/Y.md fix'];
    expect(order(items)).toEqual(expected);
    expect(order([...items].reverse())).toEqual(expected);
  });

  it('finds an item ready once its file is quiet and its retry’s Not Before has passed', () => {
    const none = { lastRecovery: undefined, claim: null };
    const at = (notBefore: number, failure: 'agent' | 'usage-limit' = 'agent') => ({
      failure,
      notBefore: new Date(notBefore),
    });
    expect(readiness({ mtimeMs: 1000, ...none }, 3000, 4000)).toEqual({
      readyAt: 4000,
      wait: null,
    });
    expect(readiness({ mtimeMs: 1000, ...none }, 3000, 3999)).toEqual({
      readyAt: 4000,
      wait: { kind: 'quiet', until: 4000 },
    });
    const retry = { mtimeMs: 1000, lastRecovery: at(9000), claim: null };
    expect(readiness(retry, 3000, 5000)).toEqual({
      readyAt: 9000,
      wait: { kind: 'not-before', until: 9000 },
    });
    // A usage limit's item waits for the queue-wide pause, not for its own time.
    const limited = { mtimeMs: 1000, lastRecovery: at(9000, 'usage-limit'), claim: null };
    expect(readiness(limited, 3000, 5000)).toEqual({ readyAt: 4000, wait: null });
    const claimed = { mtimeMs: 1000, lastRecovery: undefined, claim: '#claimed-fix' };
    expect(readiness(claimed, 3000, 5000).wait).toEqual({ kind: 'claim', tag: '#claimed-fix' });
  });

  it('lists the items ready now in dispatch order, then the others as they become ready', () => {
    const item = (id: string, weight: number, readyAt: number, wait: Wait | null = null) => ({
      id,
      weight,
      tablePriority: 3,
      readyAt,
      wait,
    });
    const order = dispatchOrder([
      item('claim', 0, 1, { kind: 'claim', tag: '#claimed-x' }),
      item('later', 0, 50, { kind: 'not-before', until: 50 }),
      item('soon', 1, 20, { kind: 'quiet', until: 20 }),
      item('p2-old', 2, 1),
      item('p1', 1, 5),
      item('p2-new', 2, 3),
    ]);
    expect(order.map((i) => i.id)).toEqual(['p1', 'p2-old', 'p2-new', 'soon', 'later', 'claim']);
  });
});

describe('priority aging (--aging MIN)', () => {
  const MIN = 60_000;
  const NOW = 100 * MIN;
  const aging = agingOf(30 * MIN, NOW);
  const item = (id: string, weight: number, minutesAgo: number, tablePriority = 3) => ({
    id,
    weight,
    tablePriority,
    readyAt: NOW - minutesAgo * MIN,
    wait: null,
  });
  const ids = (items: Array<{ id: string }>) => items.map((i) => i.id);

  it('is off at 0 minutes, and changes no order then', () => {
    expect(agingOf(0, NOW)).toBeNull();
    const items = [item('p2-old', 2, 90), item('p1-new', 1, 1)];
    expect(ids(dispatchOrder(items, agingOf(0, NOW)))).toEqual(['p1-new', 'p2-old']);
    expect(dispatchOrder(items).every((i) => !i.aged)).toBe(true);
  });

  it('moves an item ready for longer than MIN up one band, and says so', () => {
    const order = dispatchOrder(
      [item('p1-new', 1, 1), item('p2-old', 2, 31), item('p2-new', 2, 2), item('p0', 0, 0)],
      aging,
    );
    expect(ids(order)).toEqual(['p0', 'p2-old', 'p1-new', 'p2-new']);
    expect(order.filter((i) => i.aged).map((i) => i.id)).toEqual(['p2-old']);
  });

  it('moves it one band only: old #P2 work never passes fresh #P0 work', () => {
    const ancient = item('p2-ancient', 2, 10_000);
    const fresh = item('p0-fresh', 0, 0, 9);
    expect(ids(dispatchOrder([ancient, fresh], aging))).toEqual(['p0-fresh', 'p2-ancient']);
    // An aged #P1 joins the #P0 band, where table priority, then first ready, decide.
    const p1 = item('p1-old', 1, 45, 3);
    expect(ids(dispatchOrder([fresh, p1], aging))).toEqual(['p1-old', 'p0-fresh']);
    expect(ids(dispatchOrder([item('p0-first', 0, 0, 1), p1], aging))).toEqual([
      'p0-first',
      'p1-old',
    ]);
  });

  it('is a function of readyAt and now alone: longer than MIN, not at MIN', () => {
    expect(isAged(item('at', 2, 30), aging)).toBe(false);
    expect(isAged({ ...item('past', 2, 30), readyAt: NOW - 30 * MIN - 1 }, aging)).toBe(true);
    expect(isAged(item('p0', 0, 999), aging)).toBe(false);
    expect(isAged(item('later', 2, 31), agingOf(30 * MIN, NOW - 2 * MIN))).toBe(false);
  });

  it('never lets a #P2 item precede a ready #P0 item, whatever the ages (property)', () => {
    const arbitrary = fc.array(
      fc.record({
        id: fc.string(),
        weight: fc.constantFrom(0, 1, 2),
        tablePriority: fc.integer({ min: 0, max: 9 }),
        readyAt: fc.integer({ min: 0, max: NOW }),
        wait: fc.constant(null),
      }),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(arbitrary, fc.integer({ min: 1, max: 200 }), (items, minutes) => {
        const order = dispatchOrder(items, agingOf(minutes * MIN, NOW));
        const lastP0 = order.map((i) => i.weight).lastIndexOf(0);
        const firstP2 = order.findIndex((i) => i.weight === 2);
        if (lastP0 !== -1 && firstP2 !== -1) expect(firstP2).toBeGreaterThan(lastP0);
        // The same facts give the same order.
        expect(
          dispatchOrder([...items].reverse(), agingOf(minutes * MIN, NOW)).map((i) => i.weight),
        ).toEqual(order.map((i) => i.weight));
      }),
      { numRuns: 500, seed: 20261126 },
    );
  });
});
