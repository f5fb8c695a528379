import { describe, expect, it } from 'vitest';
import { NounSlots } from '../../src/daemon/noun-slots.js';
import type { WorkItem } from '../../src/dispatch/work-items.js';

const item = (file: string, noun: string, weight = 2, readyAt = 0): WorkItem => ({
  file,
  noun,
  skill: `/${noun}`,
  weight,
  tablePriority: 1,
  readyAt,
});

describe('NounSlots', () => {
  it('holds an item while its noun is at its Max, and hands the freed slot to the first in order', async () => {
    const caps: Record<string, number | undefined> = { research: 1 };
    const slots = new NounSlots((noun) => caps[noun]);
    slots.start();
    const first = await slots.take(item('/a.md', 'research'));
    expect(first).not.toBeNull();
    const got: string[] = [];
    const held: number[] = [];
    const later = slots
      .take(item('/b.md', 'research', 2, 1), (cap) => held.push(cap))
      .then((r) => (got.push('b'), r));
    const sooner = slots.take(item('/c.md', 'research', 0, 2)).then((r) => (got.push('c'), r));
    // Another noun has no cap of its own: never held.
    expect(await slots.take(item('/d.md', 'fix'))).not.toBeNull();
    expect(await slots.take(item('/e.md', 'fix'))).not.toBeNull();
    expect(slots.waitingFor('research')).toBe(2);
    expect(held).toEqual([1]); // told once, though passed over again since
    await Promise.resolve();
    expect(got).toEqual([]);
    first?.();
    first?.(); // twice gives back one slot only
    const c = await sooner;
    expect(got).toEqual(['c']);
    expect(slots.count('research')).toBe(1);
    c?.();
    await later;
    expect(got).toEqual(['c', 'b']);
  });

  it('caps all nouns together (--max-agents) and gives a freed slot to the first in dispatch order', async () => {
    const slots = new NounSlots(() => undefined, 1);
    slots.start();
    const first = await slots.take(item('/a.md', 'fix'));
    const got: string[] = [];
    const late = slots.take(item('/late.md', 'fix', 2, 9)).then((r) => (got.push('late'), r));
    const early = slots.take(item('/early.md', 'chores', 2, 1)).then((r) => (got.push('early'), r));
    expect(slots.tryTake('chores')).toBeNull();
    first?.();
    (await early)?.();
    await late;
    expect(got).toEqual(['early', 'late']);
  });

  it('counts adopted agents over the cap, and a raised cap lets waiters go on wake()', async () => {
    const caps: Record<string, number | undefined> = { research: 1 };
    const slots = new NounSlots((noun) => caps[noun]);
    // An item read before the adoption at start waits for it.
    const early = slots.take(item('/z.md', 'research'));
    const adopted = [slots.hold('research'), slots.hold('research')];
    slots.start();
    expect(slots.count('research')).toBe(2);
    expect(slots.tryTake('research')).toBeNull();
    const waiting = slots.take(item('/a.md', 'research'));
    adopted[0]?.();
    expect(slots.waitingFor('research')).toBe(2); // 1 of Max 1 still runs
    caps.research = 3;
    slots.wake();
    expect(await early).not.toBeNull();
    expect(await waiting).not.toBeNull();
    expect(slots.count('research')).toBe(3);
  });

  it('lets every waiter go without a slot on clear()', async () => {
    const slots = new NounSlots(() => 1);
    slots.start();
    slots.hold('x');
    const waiting = slots.take(item('/a.md', 'x'));
    slots.clear();
    expect(await waiting).toBeNull();
  });
});
