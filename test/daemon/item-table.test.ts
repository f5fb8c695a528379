import { describe, expect, it } from 'vitest';
import {
  ABSENT,
  ForbiddenMoveError,
  ITEM_TRANSITIONS,
  ItemTable,
  type ItemState,
  type RowKind,
} from '../../src/daemon/item-table.js';

const SNAPSHOT = {
  text: '',
  digest: '',
  attempts: 0,
  priorSession: null,
  session: null,
  dependsOn: [],
};

const SAMPLE: Record<Exclude<RowKind, typeof ABSENT>, ItemState> = {
  blocked: { kind: 'blocked', by: ['sessions/a.md'] },
  parked: { kind: 'parked', until: 5000, why: 'not-before' },
  'waiting-slot': { kind: 'waiting-slot', for: 'noun' },
  queued: { kind: 'queued' },
  launching: { kind: 'launching' },
  running: { kind: 'running', session: 'sessions/s1' },
  ending: { kind: 'ending', session: 'sessions/s1' },
  claimed: { kind: 'claimed' },
  elsewhere: { kind: 'elsewhere', host: 'build-box' },
  'not-dispatchable': { kind: 'not-dispatchable', why: 'no row' },
};

/** Another value of the kinds that carry one. */
const OTHER: Partial<Record<RowKind, ItemState>> = {
  blocked: { kind: 'blocked', by: ['sessions/b.md'] },
  parked: { kind: 'parked', until: 9000, why: 'not-before' },
  'waiting-slot': { kind: 'waiting-slot', for: 'pause' },
  elsewhere: { kind: 'elsewhere', host: 'laptop' },
  'not-dispatchable': { kind: 'not-dispatchable', why: 'marked not dispatchable' },
};

const KINDS = Object.keys(ITEM_TRANSITIONS) as RowKind[];
const stateOf = (kind: RowKind): ItemState | null => (kind === ABSENT ? null : SAMPLE[kind]);

/** A path to `kind` from no row through allowed moves only (breadth first). */
function pathTo(kind: RowKind): RowKind[] {
  const seen = new Map<RowKind, RowKind[]>([[ABSENT, []]]);
  const queue: RowKind[] = [ABSENT];
  while (queue.length > 0) {
    const at = queue.shift() as RowKind;
    for (const next of ITEM_TRANSITIONS[at]) {
      if (seen.has(next)) continue;
      seen.set(next, [...(seen.get(at) as RowKind[]), next]);
      queue.push(next);
    }
  }
  const path = seen.get(kind);
  if (!path) throw new Error(`${kind} cannot be reached`);
  return path;
}

function tableAt(kind: RowKind): { table: ItemTable; lines: string[] } {
  const lines: string[] = [];
  const table = new ItemTable(
    () => 1000,
    (line) => lines.push(line),
    () => undefined,
  );
  for (const step of pathTo(kind)) table.move('/r.md', 'fix', stateOf(step), 'walk');
  return { table, lines };
}

describe('the item table', () => {
  it('walks every allowed transition, each recorded once', () => {
    let walked = 0;
    for (const from of KINDS) {
      for (const to of ITEM_TRANSITIONS[from]) {
        const { table, lines } = tableAt(from);
        const before = table.events().length;
        // A move within one kind is a move only to another value of it (a later Not Before...).
        const target = to === from ? (OTHER[to] ?? null) : stateOf(to);
        if (to === from && !(to in OTHER)) {
          expect(table.move('/r.md', 'fix', stateOf(to), 'test')).toBe(false);
          walked++;
          continue;
        }
        expect(table.move('/r.md', 'fix', target, 'test')).toBe(true);
        expect(table.get('/r.md', 'fix')?.state ?? null).toEqual(target);
        expect(table.events().length).toBe(before + 1);
        expect(table.events().at(-1)).toMatchObject({ from, to, why: 'test' });
        expect(lines.at(-1)).toContain(': test');
        walked++;
      }
    }
    expect(walked).toBe(KINDS.reduce((n, k) => n + ITEM_TRANSITIONS[k].length, 0));
  });

  it('refuses every move it does not list, and leaves the row as it was', () => {
    let refused = 0;
    for (const from of KINDS) {
      for (const to of KINDS) {
        if (ITEM_TRANSITIONS[from].includes(to) || to === from) continue;
        const { table } = tableAt(from);
        const events = table.events().length;
        expect(() => table.move('/r.md', 'fix', stateOf(to), 'test')).toThrow(ForbiddenMoveError);
        expect(table.get('/r.md', 'fix')?.state ?? null).toEqual(stateOf(from));
        expect(table.events().length).toBe(events);
        refused++;
      }
    }
    // A second agent over a running claim, or a launch past admission, is never a move.
    expect(() => tableAt('running').table.move('/r.md', 'fix', SAMPLE.launching, 'x')).toThrow(
      'no move from running to launching',
    );
    expect(() => tableAt(ABSENT).table.move('/r.md', 'fix', SAMPLE.launching, 'x')).toThrow();
    expect(refused).toBeGreaterThan(20);
  });

  it('records nothing for a move to the state it is in, and keeps the newer item', () => {
    const { table } = tableAt('parked');
    const events = table.events().length;
    const item = {
      file: '/r.md',
      noun: 'fix',
      skill: '/fix',
      weight: 2,
      tablePriority: 1,
      readyAt: 9,
      wait: null,
      blockers: [],
      snapshot: SNAPSHOT,
    };
    expect(table.move('/r.md', 'fix', SAMPLE.parked, 'again', item)).toBe(false);
    expect(table.events().length).toBe(events);
    expect(table.get('/r.md', 'fix')?.item).toBe(item);
  });

  it('counts the slots held, of a noun and of all, and wakes a file through its reader', () => {
    const woken: string[] = [];
    const table = new ItemTable(
      () => 0,
      () => undefined,
      (file) => woken.push(file),
    );
    table.move('/a.md', 'fix', SAMPLE.running, 'adopted');
    table.move('/b.md', 'fix', SAMPLE.queued, 'read');
    table.move('/b.md', 'fix', SAMPLE.launching, 'admitted');
    table.move('/c.md', 'chores', SAMPLE.running, 'adopted');
    table.move('/c.md', 'chores', SAMPLE.ending, 'approved again');
    table.move('/d.md', 'chores', SAMPLE.queued, 'read');
    expect(table.slotsHeld('fix')).toBe(2);
    expect(table.slotsHeld()).toBe(3);
    expect(table.list('queued').map((row) => row.file)).toEqual(['/d.md']);
    expect(table.ofFile('/c.md').map((row) => row.state.kind)).toEqual(['ending']);
    table.wake('/c.md');
    expect(woken).toEqual(['/c.md']);
  });
});
