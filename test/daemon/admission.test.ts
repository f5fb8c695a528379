/**
 * Admission, pure (what noun-slots.test.ts tested of the slots): one walk in dispatch order over
 * --max-agents, a noun's Max and the usage-limit pause.
 */
import { describe, expect, it } from 'vitest';
import { decideAdmission, type Admission, type PauseGate } from '../../src/daemon/admission.js';
import type { ItemRow } from '../../src/daemon/item-table.js';
import type { Aging } from '../../src/dispatch/work-order.js';

const SNAPSHOT = {
  text: '',
  digest: '',
  attempts: 0,
  priorSession: null,
  session: null,
  dependsOn: [],
};

const row = (file: string, noun: string, weight = 2, readyAt = 0): ItemRow => ({
  file,
  noun,
  state: { kind: 'queued' },
  item: {
    file,
    noun,
    skill: `/${noun}`,
    weight,
    tablePriority: 1,
    readyAt,
    wait: null,
    blockers: [],
    snapshot: SNAPSHOT,
  },
  since: 0,
});

function decide(
  rows: ItemRow[],
  { held = {}, caps = {}, maxAgents = 0, pause = 'go' as PauseGate, aging = null } = {} as {
    held?: Record<string, number>;
    caps?: Record<string, number>;
    maxAgents?: number;
    pause?: PauseGate;
    aging?: Aging | null;
  },
): string[] {
  const decisions = decideAdmission({
    ready: rows,
    held: (noun) =>
      noun === undefined ? Object.values(held).reduce((a, b) => a + b, 0) : (held[noun] ?? 0),
    capOf: (noun) => caps[noun],
    maxAgents,
    pause,
    aging,
  });
  return decisions.map((d: Admission) => `${d.item.file}:${'go' in d ? d.go : `wait-${d.wait}`}`);
}

describe('admission', () => {
  it('holds an item while its noun is at its Max, and never keeps another noun from a slot', () => {
    const rows = [
      row('/b.md', 'research', 2, 1),
      row('/c.md', 'research', 0, 2),
      row('/d.md', 'fix'),
      row('/e.md', 'fix'),
    ];
    expect(decide(rows, { caps: { research: 1 } })).toEqual([
      '/c.md:launch',
      '/d.md:launch',
      '/e.md:launch',
      '/b.md:wait-noun',
    ]);
  });

  it('counts the agents running (adopted ones too) against the caps, and a raised cap admits more', () => {
    const rows = [row('/z.md', 'research'), row('/a.md', 'research', 2, 1)];
    expect(decide(rows, { held: { research: 2 }, caps: { research: 1 } })).toEqual([
      '/z.md:wait-noun',
      '/a.md:wait-noun',
    ]);
    expect(decide(rows, { held: { research: 1 }, caps: { research: 3 } })).toEqual([
      '/z.md:launch',
      '/a.md:launch',
    ]);
  });

  it('caps all nouns together (--max-agents), first in dispatch order', () => {
    const rows = [row('/late.md', 'fix', 2, 9), row('/early.md', 'chores', 2, 1)];
    expect(decide(rows, { maxAgents: 2, held: { fix: 1 } })).toEqual([
      '/early.md:launch',
      '/late.md:wait-agents',
    ]);
  });

  it('admits none while paused, and one probe once the pause ran out; a capped item never probes', () => {
    const rows = [row('/a.md', 'research', 0), row('/b.md', 'fix', 1), row('/c.md', 'fix', 2)];
    expect(decide(rows, { pause: 'hold' })).toEqual([
      '/a.md:wait-pause',
      '/b.md:wait-pause',
      '/c.md:wait-pause',
    ]);
    expect(decide(rows, { pause: 'probe', caps: { research: 1 }, held: { research: 1 } })).toEqual([
      '/a.md:wait-noun',
      '/b.md:probe',
      '/c.md:wait-probe',
    ]);
  });

  it('moves an item ready longer than --aging one band up, never more', () => {
    const rows = [row('/fresh-p1.md', 'fix', 1, 100_000), row('/old-p2.md', 'fix', 2, 0)];
    const aging = { afterMs: 60_000, now: 120_000 };
    expect(decide(rows, { maxAgents: 1 })).toEqual([
      '/fresh-p1.md:launch',
      '/old-p2.md:wait-agents',
    ]);
    expect(decide(rows, { maxAgents: 1, aging })).toEqual([
      '/old-p2.md:launch',
      '/fresh-p1.md:wait-agents',
    ]);
    // One band only: old #P2 work never passes fresh #P0 work.
    const p0 = [row('/fresh-p0.md', 'fix', 0, 100_000), row('/old-p2.md', 'fix', 2, 0)];
    expect(decide(p0, { maxAgents: 1, aging })).toEqual([
      '/fresh-p0.md:launch',
      '/old-p2.md:wait-agents',
    ]);
  });
});
