import { describe, expect, it } from 'vitest';
import {
  compareOrder,
  dispatchOrder,
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
