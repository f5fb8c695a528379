import { describe, expect, it } from 'vitest';
import { StatusCache } from '../../src/control/status-cache.js';
import type { FileFindings } from '../../src/status/collect-status.js';

const findings = (title: string): FileFindings =>
  ({ waiting: [], needs: [{ kind: 'approval', title }], next: [], claims: [] }) as never;

describe('StatusCache', () => {
  it('keeps nothing a status under an older table made, once a newer table took the cache', () => {
    const cache = new StatusCache(() => true);
    const old = cache.under('table A');
    const newer = cache.under('table B');
    // The status under table A reads a file after table B's status began: its token and set
    // must not land under table B.
    old.set('/r/a.md', findings('under A'), old.token());
    expect(newer.get('/r/a.md')).toBeUndefined();
    expect(old.get('/r/a.md')).toBeUndefined();
    newer.set('/r/a.md', findings('under B'), newer.token());
    expect(cache.under('table B').get('/r/a.md')).toEqual(findings('under B'));
  });

  it('lists the files that may give something, the same list until an entry is kept or forgotten', () => {
    const cache = new StatusCache(() => true);
    const view = cache.under('table A');
    const nothing: FileFindings = { waiting: [], needs: [], next: [], claims: [] };
    const files = ['/r/a.md', '/r/b.md', '/r/c.md', '/r/d/e.md'];
    // Nothing kept yet: every file is to be read.
    expect(view.withFindings?.(files)).toEqual(files);
    for (const file of files.slice(1)) view.set(file, nothing, view.token());
    view.set('/r/c.md', findings('needs you'), view.token());
    const first = view.withFindings?.(files);
    expect(first).toEqual(['/r/a.md', '/r/c.md']);
    expect(view.withFindings?.(files)).toBe(first);
    // A file that changes is read again; one that gives nothing now leaves the list.
    cache.forget('/r/d');
    expect(view.withFindings?.(files)).toEqual(['/r/a.md', '/r/c.md', '/r/d/e.md']);
    view.set('/r/c.md', nothing, view.token());
    expect(view.withFindings?.(files)).toEqual(['/r/a.md', '/r/d/e.md']);
    // Another table starts afresh; the older view filters nothing once it is not current.
    const newer = cache.under('table B');
    expect(newer.withFindings?.(files)).toEqual(files);
    expect(view.withFindings?.(files)).toBe(files);
  });

  it('keeps nothing read before the file changed', () => {
    const cache = new StatusCache(() => true);
    const view = cache.under('table A');
    const token = view.token();
    cache.forget('/r/a.md');
    view.set('/r/a.md', findings('stale'), token);
    expect(view.get('/r/a.md')).toBeUndefined();
  });

  it('gives back what it was given, as a copy: numbers, nulls, nested lists and long texts', () => {
    const cache = new StatusCache(() => true);
    const view = cache.under('table A');
    const given = {
      waiting: [],
      needs: [
        {
          kind: 'not-dispatched',
          file: '/r/a.md',
          tags: ['#delegated-fix', '#done-fix'],
          reason: `two states of one noun ${'x'.repeat(60)}`,
          line: null,
        },
        { kind: 'approval', file: '/r/a.md', tag: '#needs-fix', line: 3, place: 'prose' },
      ],
      next: [],
      claims: [],
    } as never as FileFindings;
    const expected = structuredClone(given);
    view.set('/r/a.md', given, view.token());
    const kept = view.get('/r/a.md');
    expect(kept).toEqual(expected);
    expect(kept).not.toBe(given);
    // Frozen, each item and list: a status renders a frozen item's lines once (linesOnce).
    expect(Object.isFrozen(kept)).toBe(true);
    for (const need of kept?.needs ?? []) expect(Object.isFrozen(need)).toBe(true);
    expect(Object.isFrozen(kept?.needs[0] && (kept.needs[0] as { tags: string[] }).tags)).toBe(
      true,
    );
  });

  it('gives back data JSON would change as it was: undefined, Infinity, -0, a Date, a hole', () => {
    const cache = new StatusCache(() => true);
    const view = cache.under('table A');
    const hole = ['#a'];
    hole[2] = '#c';
    const item = (extra: object) => ({ kind: 'approval', file: '/r/a.md', title: 't', ...extra });
    const needs = [
      item({ session: undefined }),
      item({ readyAt: Infinity }),
      item({ line: -0 }),
      item({ since: new Date(5) }),
      item({ tags: hole }),
      item({ line: 7, place: 'prose' }),
    ];
    for (const need of needs) {
      const given = { waiting: [], needs: [need], next: [], claims: [] } as never as FileFindings;
      view.set('/r/a.md', given, view.token());
      const kept = view.get('/r/a.md')?.needs[0] as Record<string, unknown>;
      expect(kept).toStrictEqual(need);
      expect(Object.keys(kept)).toEqual(Object.keys(need));
    }
    const kept = view.get('/r/a.md')?.needs[0] as Record<string, unknown>;
    expect(Object.is(kept.line, 7)).toBe(true);
  });

  it('keeps a lone item needing you alone, and gives back its findings the same, frozen', () => {
    const cache = new StatusCache(() => true);
    const view = cache.under('table A');
    const need = { kind: 'approval', file: '/r/a.md', tag: '#needs-fix', title: 't', line: 3 };
    const next = { file: '/r/b.md', tag: '#next-fix', noun: 'fix', title: 'u' };
    const lone = { waiting: [], needs: [need], next: [], claims: [] } as never as FileFindings;
    const two = { waiting: [], needs: [need], next: [next], claims: [] } as never as FileFindings;
    view.set('/r/a.md', lone, view.token());
    view.set('/r/b.md', two, view.token());
    for (const [file, given] of [
      ['/r/a.md', lone],
      ['/r/b.md', two],
    ] as const) {
      const first = view.get(file);
      const again = view.get(file);
      expect(first).toStrictEqual(structuredClone(given));
      expect(again).toStrictEqual(first);
      // The same frozen item each time: a status renders its lines once (linesOnce).
      expect(again?.needs[0]).toBe(first?.needs[0]);
      for (const list of Object.values(first ?? {})) expect(Object.isFrozen(list)).toBe(true);
      expect(Object.isFrozen(first)).toBe(true);
      expect(Object.isFrozen(first?.needs[0])).toBe(true);
    }
    expect(view.withFindings?.(['/r/a.md', '/r/b.md', '/r/c.md'])).toEqual([
      '/r/a.md',
      '/r/b.md',
      '/r/c.md',
    ]);
  });
});
