/** The judgement of an item's dependencies: pure, on a graph as the IO reads it from the files. */
import { describe, expect, it } from 'vitest';
import {
  blockerText,
  isHeldByMistake,
  judgeDependencies,
  type Blocker,
  type DependencyFile,
  type ResolvedEntry,
} from '../../src/dispatch/depends-on.js';
import type { RecoveryRecord } from '../../src/tags/recovery-entries.js';

const on = (pattern: string, ...files: string[]): ResolvedEntry => ({
  pattern,
  kind: 'files',
  files,
});
const request = (
  tags: string[],
  dependsOn: ResolvedEntry[] = [],
  lastRecovery?: RecoveryRecord,
): DependencyFile => ({ kind: 'request', tags, lastRecovery, dependsOn });
const judge = (dependsOn: ResolvedEntry[], files: Record<string, DependencyFile>) =>
  judgeDependencies({ file: 'item.md', dependsOn, files: new Map(Object.entries(files)) });

describe('judgeDependencies', () => {
  it('frees an item whose every dependency is done, and one with none', () => {
    expect(judge([], {})).toEqual([]);
    const files = { 'a.md': request(['#done-fix', '#P1']), 'b.md': request(['#done-docs']) };
    expect(judge([on('a.md', 'a.md'), on('*.md', 'a.md', 'b.md')], files)).toEqual([]);
  });

  it('holds it after a dependency not done yet, naming the file and its state', () => {
    const files = { 'a.md': request(['#claimed-fix']), 'b.md': request(['#delegated-docs']) };
    const blockers = judge([on('a.md', 'a.md'), on('b.md', 'b.md')], files);
    expect(blockers).toEqual([
      { kind: 'pending', pattern: 'a.md', file: 'a.md', states: ['#claimed-fix'] },
      { kind: 'pending', pattern: 'b.md', file: 'b.md', states: ['#delegated-docs'] },
    ]);
    expect(blockerText(blockers[0]!)).toBe('after a.md (#claimed-fix)');
  });

  it('calls a file done only when every lifecycle noun is done', () => {
    const files = { 'a.md': request(['#done-research', '#delegated-implementation']) };
    expect(judge([on('a.md', 'a.md')], files)).toEqual([
      { kind: 'pending', pattern: 'a.md', file: 'a.md', states: ['#delegated-implementation'] },
    ]);
    // Two states of one noun (written by hand) are not done either.
    const twice = { 'a.md': request(['#done-fix', '#delegated-fix']) };
    expect(judge([on('a.md', 'a.md')], twice)).toHaveLength(1);
  });

  it('keeps it held after a dependency that failed and went back to #needs-X (never released)', () => {
    const failed = { failure: 'agent' as const, notBefore: null };
    const files = { 'a.md': request(['#needs-fix'], [], failed) };
    const blockers = judge([on('a.md', 'a.md')], files);
    expect(blockers).toEqual([
      { kind: 'failed', pattern: 'a.md', file: 'a.md', states: ['#needs-fix'], failure: 'agent' },
    ]);
    expect(blockerText(blockers[0]!)).toMatch(/a\.md, which failed .* held until it is retried/);
  });

  it('keeps it held after a dependency at #needs-X that waits for approval', () => {
    const files = { 'a.md': request(['#needs-fix']) };
    expect(judge([on('a.md', 'a.md')], files)).toEqual([
      { kind: 'needs', pattern: 'a.md', file: 'a.md', states: ['#needs-fix'] },
    ]);
  });

  it('holds it after an entry that names no file, one outside the root, an unreadable file and a file without state', () => {
    const files = {
      'bin.md': { kind: 'unreadable', reason: 'not a UTF-8 text file' } as const,
      'notes.md': request(['#P1']),
    };
    const blockers = judge(
      [
        on('gone.md'),
        { pattern: '../x.md', kind: 'outside-root' },
        on('bin.md', 'bin.md'),
        on('notes.md', 'notes.md'),
      ],
      files,
    );
    expect(blockers).toEqual([
      { kind: 'missing', pattern: 'gone.md' },
      { kind: 'outside-root', pattern: '../x.md' },
      { kind: 'unreadable', pattern: 'bin.md', file: 'bin.md', reason: 'not a UTF-8 text file' },
      { kind: 'no-state', pattern: 'notes.md', file: 'notes.md' },
    ]);
    expect(blockers.map(blockerText)).toEqual([
      'Depends On gone.md names no file',
      'Depends On ../x.md is outside the project root: refused',
      'after bin.md, which cannot be read: not a UTF-8 text file',
      'after notes.md, which carries no lifecycle tag, so it is never done',
    ]);
  });

  it('reports a cycle, naming its files in order', () => {
    const files = {
      'b.md': request(['#delegated-fix'], [on('c.md', 'c.md')]),
      'c.md': request(['#delegated-fix'], [on('item.md', 'item.md')]),
    };
    const blockers = judge([on('b.md', 'b.md')], files);
    expect(blockers).toEqual([
      { kind: 'cycle', pattern: 'b.md', cycle: ['item.md', 'b.md', 'c.md'] },
    ]);
    expect(blockerText(blockers[0]!)).toBe(
      'a cycle: item.md → b.md → c.md → item.md, none can start',
    );
  });

  it('reports a self-dependency as a cycle of one file', () => {
    expect(judge([on('item.md', 'item.md')], {})).toEqual([
      { kind: 'cycle', pattern: 'item.md', cycle: ['item.md'] },
    ]);
  });

  it('sees no cycle through a dependency that is done', () => {
    const files = { 'b.md': request(['#done-fix'], [on('item.md', 'item.md')]) };
    expect(judge([on('b.md', 'b.md')], files)).toEqual([]);
  });

  it('holds a child of a parent that is held itself as plainly held: no deadlock, no cycle', () => {
    // parent waits for grandparent, which waits for a human; a cycle elsewhere is its own.
    const files = {
      'parent.md': request(['#delegated-fix'], [on('grand.md', 'grand.md'), on('x.md', 'x.md')]),
      'grand.md': request(['#needs-fix']),
      'x.md': request(['#delegated-a'], [on('y.md', 'y.md')]),
      'y.md': request(['#delegated-b'], [on('x.md', 'x.md')]),
    };
    expect(judge([on('parent.md', 'parent.md')], files)).toEqual([
      { kind: 'pending', pattern: 'parent.md', file: 'parent.md', states: ['#delegated-fix'] },
    ]);
    // The parent's own judgement names what holds it.
    const parent = judgeDependencies({
      file: 'parent.md',
      dependsOn: [on('grand.md', 'grand.md')],
      files: new Map(Object.entries(files)),
    });
    expect(parent).toEqual([
      { kind: 'needs', pattern: 'grand.md', file: 'grand.md', states: ['#needs-fix'] },
    ]);
  });

  it('tells a mistake in the files (warned by the daemon) from the plan working', () => {
    const file = { pattern: 'a.md', file: 'a.md' };
    const mistakes = [
      { kind: 'cycle', pattern: 'a.md', cycle: ['item.md', 'a.md'] },
      { kind: 'outside-root', pattern: '../a.md' },
      { kind: 'no-state', ...file },
      { kind: 'unreadable', ...file, reason: 'a directory' },
    ] satisfies Blocker[];
    const plan = [
      { kind: 'pending', ...file, states: ['#claimed-fix'] },
      { kind: 'needs', ...file, states: ['#needs-fix'] },
      { kind: 'failed', ...file, states: ['#needs-fix'], failure: 'agent' },
      // An earlier step may write the file it names.
      { kind: 'missing', pattern: 'batch-*.md' },
    ] satisfies Blocker[];
    expect(mistakes.map(isHeldByMistake)).toEqual([true, true, true, true]);
    expect(plan.map(isHeldByMistake)).toEqual([false, false, false, false]);
  });
});
