/**
 * The reconcile pass's table of one directory's files (src/watch/file-table.ts) answers as a Map
 * of name to size, mtime and inode would, whatever the names (any code units, in any order) and
 * whatever changes are made to it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FileTable, FileTableBuilder, type Seen } from '../../src/watch/file-table.js';

const seen = fc.record({
  size: fc.nat(),
  // Fractional, as Node's mtimeMs is.
  mtimeMs: fc.double({ min: 0, max: 4e12, noNaN: true }),
  ino: fc.nat({ max: 2 ** 53 - 1 }),
});
// Any code units, lone surrogates too, and full code points.
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const name = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.string({ unit: codeUnit, maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
);

function tableOf(entries: Iterable<[string, Seen]>): FileTable {
  const table = new FileTableBuilder();
  for (const [name, seen] of entries) table.add(name, seen);
  return table.build();
}

function expectSame(table: FileTable, model: Map<string, Seen>, probes: string[]): void {
  expect([...table.names].sort()).toEqual([...model.keys()].sort());
  expect(table.equals(tableOf(model))).toBe(true);
  for (const probe of [...model.keys(), ...probes]) {
    const kept = model.get(probe);
    expect(table.has(probe)).toBe(kept !== undefined);
    if (kept) {
      expect(table.same(probe, kept)).toBe(true);
      expect(table.same(probe, { ...kept, size: kept.size + 1 })).toBe(false);
      expect(table.same(probe, { ...kept, mtimeMs: kept.mtimeMs + 0.5 })).toBe(false);
      expect(table.same(probe, { ...kept, ino: kept.ino + 1 })).toBe(false);
    } else expect(table.same(probe, { size: 0, mtimeMs: 0, ino: 0 })).toBe(false);
  }
}

describe('FileTable', () => {
  it('answers as a Map would, after any changes', () => {
    const change = fc.oneof(
      fc.record({ set: name, to: seen }),
      fc.record({ remove: name }),
      fc.record({ removeKept: fc.nat() }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, seen), { maxLength: 30 }),
        fc.array(change, { maxLength: 10 }),
        fc.array(name, { maxLength: 5 }),
        (entries, changes, probes) => {
          const model = new Map(entries);
          let table = tableOf(model);
          expectSame(table, model, probes);
          for (const c of changes) {
            const before = table;
            const unchanged = (name: string, to?: Seen): boolean =>
              to === undefined
                ? !model.has(name)
                : model.get(name)?.size === to.size &&
                  model.get(name)?.mtimeMs === to.mtimeMs &&
                  model.get(name)?.ino === to.ino;
            if ('set' in c) {
              const same = unchanged(c.set, c.to);
              model.set(c.set, c.to);
              table = table.with(c.set, c.to);
              expect(table.equals(before)).toBe(same);
            } else {
              const gone =
                'remove' in c ? c.remove : [...model.keys()][c.removeKept % (model.size || 1)];
              if (gone === undefined) continue;
              const same = unchanged(gone);
              model.delete(gone);
              table = table.without(gone);
              expect(table.equals(before)).toBe(same);
            }
            expectSame(table, model, probes);
          }
        },
      ),
    );
  });

  it('keeps names whose order is by code unit, not by locale', () => {
    const names = ['b', 'B', 'a', '\uD83D\uDE00', '\uFFFD', 'ä', 'a.md', 'a-b', ''];
    const stats = names.map((_, i) => ({ size: i, mtimeMs: i + 0.25, ino: i }));
    const table = tableOf(names.map((n, i): [string, Seen] => [n, stats[i] as Seen]));
    names.forEach((n, i) => expect(table.same(n, stats[i] as Seen)).toBe(true));
    expect(table.names).toEqual([...names].sort());
    expect(FileTable.EMPTY.has('')).toBe(false);
  });
});
