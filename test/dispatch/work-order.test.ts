import { describe, expect, it } from 'vitest';
import { compareOrder, queuePriority, weightOf } from '../../src/dispatch/work-order.js';

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
    const byQueue = [...items].sort(
      (a, b) => queuePriority(b) - queuePriority(a) || a.readyAt - b.readyAt,
    );
    expect(byQueue.map((i) => i.id)).toEqual([
      'p0-chores',
      'p1-impl',
      'p1-impl-late',
      'p1-loop',
      'p2-fix',
    ]);
  });
});
