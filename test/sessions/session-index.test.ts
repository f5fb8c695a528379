/**
 * SessionIndex.load on real session directories: every record read (a few at a time), the
 * unended ones in the listing's order, and whatever is not a record skipped.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionIndex } from '../../src/daemon/session-index.js';

// The first listed answers last: records kept in the order they came would come reversed.
vi.mock('../../src/sessions/session-state.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/sessions/session-state.js')>();
  return {
    ...original,
    readStateRecord: async (dir: string) => {
      const n = Number(/(\d+)$/.exec(dir)?.[1] ?? 0);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 40 - n)));
      return original.readStateRecord(dir);
    },
  };
});

let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

function record(name: string, status: string, requestFile: string): string {
  return JSON.stringify({ version: 1, status, noun: 'fix', requestFile, sessionRef: name });
}

describe('the session index at start', () => {
  it('reads every record, more than it reads at once, and keeps the unended in order', async () => {
    root = await mkdtemp(join(tmpdir(), 'session-index-'));
    const sessions = join(root, 'sessions');
    const names = Array.from({ length: 40 }, (_, i) => `2026_11_27_${String(i).padStart(6, '0')}`);
    for (const [i, name] of names.entries()) {
      await mkdir(join(sessions, name), { recursive: true });
      const status = i % 3 === 0 ? 'abandoned' : i % 3 === 1 ? 'running' : 'exited';
      await writeFile(
        join(sessions, name, '.state.json'),
        record(`sessions/${name}`, status, `/r/${i % 2}.md`),
      );
    }
    await mkdir(join(sessions, 'no-record'));
    await mkdir(join(sessions, 'malformed'));
    await writeFile(join(sessions, 'malformed', '.state.json'), '{');
    await mkdir(join(sessions, '.engine'));
    await writeFile(join(sessions, '.engine', '.state.json'), record('x', 'running', '/r/x.md'));
    await writeFile(join(sessions, 'request.md'), '# R\n');

    const index = new SessionIndex(root);
    const unended = await index.load();

    // In the order the directory lists them, as when they were read one after another.
    const unendedNames = new Set(names.filter((_, i) => i % 3 !== 0));
    const listed = (await readdir(sessions)).filter((name) => unendedNames.has(name));
    expect(listed).toHaveLength(unendedNames.size);
    expect(unended.map((u) => u.dir)).toEqual(listed.map((name) => join(sessions, name)));
    expect(unended.every((u) => u.state.status !== 'abandoned')).toBe(true);
    // Every record names its request's sessions, abandoned ones too.
    expect(index.sessionsOf('/r/0.md')).toHaveLength(20);
    expect(index.sessionsOf('/r/1.md')).toHaveLength(20);
    expect(index.sessionsOf('/r/x.md')).toEqual([]);
  });

  it('is empty without a sessions directory', async () => {
    root = await mkdtemp(join(tmpdir(), 'session-index-'));
    expect(await new SessionIndex(root).load()).toEqual([]);
  });
});
