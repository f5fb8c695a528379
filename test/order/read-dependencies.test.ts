/**
 * The IO of Depends On on real files in a temporary root: paths and globs resolved, never outside
 * the root, each named file read through the one reader and scanned (inline, and through the
 * daemon's worker pool), their own entries followed to find a cycle.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { blockersOf, readDependencyGraph } from '../../src/order/read-dependencies.js';
import { requeueEdit } from '../../src/tags/lifecycle-edits.js';
import { ScanPool, summaryOf } from '../../src/tags/scan-pool.js';
import { scanTags } from '../../src/tags/scan-tags.js';

const scan = async (text: string) => summaryOf(scanTags(text), text);
let base: string;
let root: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'engine-depends-')));
  root = join(base, 'project');
  await mkdir(join(root, 'directives'), { recursive: true });
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Writes a request below the root: its Tags line, and a Depends On line when given. */
async function request(file: string, tags: string, dependsOn?: string): Promise<string> {
  const path = join(root, file);
  await mkdir(dirname(path), { recursive: true });
  const line = dependsOn === undefined ? '' : `**Depends On**: ${dependsOn}\n`;
  await writeFile(path, `# ${file}\n**Tags**: ${tags}\n${line}\nBody.\n`);
  return path;
}

/** What holds `file`, from its own entries as the daemon's scan gives them. */
async function holds(file: string) {
  const path = join(root, file);
  const text = await readFile(path, 'utf8');
  const { dependsOn } = summaryOf(scanTags(text), text);
  return blockersOf(root, path, dependsOn, scan);
}

describe('blockersOf', () => {
  it('frees an item whose dependencies are done, by path and by glob', async () => {
    await request('sessions/a.md', '#done-fix');
    await request('sessions/phase-1/b.md', '#done-docs #P1');
    await request('sessions/phase-1/c.md', '#done-fix');
    await request('sessions/item.md', '#delegated-fix', 'sessions/a.md, `sessions/phase-1/*.md`');
    expect(await holds('sessions/item.md')).toEqual([]);
  });

  it('holds it after a dependency not done, and frees it once that is done', async () => {
    await request('sessions/a.md', '#claimed-fix');
    await request('sessions/item.md', '#delegated-fix', 'sessions/a.md');
    expect(await holds('sessions/item.md')).toEqual([
      {
        kind: 'pending',
        pattern: 'sessions/a.md',
        file: 'sessions/a.md',
        states: ['#claimed-fix'],
      },
    ]);
    await request('sessions/a.md', '#done-fix');
    expect(await holds('sessions/item.md')).toEqual([]);
  });

  it('keeps it held after a dependency whose agent failed and went back to #needs-X', async () => {
    const claimed = '# a\n**Tags**: #claimed-fix\n**Session**: sessions/s1\n\nBody.\n';
    const failed = requeueEdit(claimed, 'fix', 'sessions/s1', {
      date: '2026-11-24T10:00:00.000Z',
      reason: 'agent exited',
      priorSession: 'sessions/s1/',
      attempt: 1,
    });
    await mkdir(join(root, 'sessions'), { recursive: true });
    await writeFile(join(root, 'sessions/a.md'), failed);
    await request('sessions/item.md', '#delegated-fix', 'sessions/a.md');
    expect(await holds('sessions/item.md')).toEqual([
      {
        kind: 'failed',
        pattern: 'sessions/a.md',
        file: 'sessions/a.md',
        states: ['#needs-fix'],
        failure: 'agent',
      },
    ]);
  });

  it('holds it after a path or glob that names no file, and an unreadable file', async () => {
    await mkdir(join(root, 'sessions/dir.md'), { recursive: true });
    await writeFile(join(root, 'sessions/bin.md'), Buffer.from([0x23, 0, 0xff]));
    await request(
      'sessions/item.md',
      '#delegated-fix',
      'sessions/gone.md nothing/*.md sessions/bin.md sessions/dir.md',
    );
    const blockers = await holds('sessions/item.md');
    expect(blockers.map((b) => [b.kind, b.pattern])).toEqual([
      ['missing', 'sessions/gone.md'],
      ['missing', 'nothing/*.md'],
      ['unreadable', 'sessions/bin.md'],
      ['unreadable', 'sessions/dir.md'],
    ]);
  });

  it('refuses entries outside the root: .. escapes, absolute paths, symlinks out', async () => {
    await writeFile(join(base, 'outside.md'), '# o\n**Tags**: #done-fix\n');
    await mkdir(join(root, 'sessions'), { recursive: true });
    await symlink(join(base, 'outside.md'), join(root, 'sessions/link.md'));
    await request('sessions/inside.md', '#done-fix');
    const entries = `../outside.md sessions/../../outside.md ${join(base, 'outside.md')} sessions/link.md ${join(root, 'sessions/inside.md')}`;
    await request('sessions/item.md', '#delegated-fix', entries);
    const blockers = await holds('sessions/item.md');
    expect(blockers.map((b) => b.kind)).toEqual([
      'outside-root',
      'outside-root',
      'outside-root',
      'outside-root',
    ]);
  });

  it('matches a glob against the names as walked, and only files inside the root', async () => {
    await request('elsewhere/target.md', '#claimed-fix');
    await writeFile(join(base, 'outside.md'), '# o\n**Tags**: #claimed-fix\n');
    await mkdir(join(root, 'sessions/phase'), { recursive: true });
    await symlink(join(root, 'elsewhere/target.md'), join(root, 'sessions/phase/link.md'));
    await symlink(join(base, 'outside.md'), join(root, 'sessions/phase/out.md'));
    await request('sessions/item.md', '#delegated-fix', '`sessions/phase/*.md`');
    expect(await holds('sessions/item.md')).toEqual([
      {
        kind: 'pending',
        pattern: 'sessions/phase/*.md',
        file: 'elsewhere/target.md',
        states: ['#claimed-fix'],
      },
    ]);
  });

  it('reports a cycle through the files, naming them, and a self-dependency', async () => {
    await request('sessions/a.md', '#delegated-fix', 'sessions/b.md');
    await request('sessions/b.md', '#delegated-fix', 'sessions/a.md');
    expect(await holds('sessions/a.md')).toEqual([
      { kind: 'cycle', pattern: 'sessions/b.md', cycle: ['sessions/a.md', 'sessions/b.md'] },
    ]);
    await request('sessions/self.md', '#delegated-fix', 'sessions/self.md');
    expect(await holds('sessions/self.md')).toEqual([
      { kind: 'cycle', pattern: 'sessions/self.md', cycle: ['sessions/self.md'] },
    ]);
  });

  it('never lets a glob match the file that holds it', async () => {
    await request('sessions/phase-1/a.md', '#done-fix');
    await request('sessions/phase-1/item.md', '#delegated-fix', '`sessions/phase-1/*.md`');
    expect(await holds('sessions/phase-1/item.md')).toEqual([]);
  });

  it('reads a long chain only up to its bound, and still holds the item', async () => {
    for (let i = 0; i < 6; i++)
      await request(`sessions/c${i}.md`, '#delegated-fix', `sessions/c${i + 1}.md`);
    await request('sessions/c6.md', '#delegated-fix', 'sessions/c0.md');
    const path = join(root, 'sessions/c0.md');
    const graph = await readDependencyGraph(root, path, ['sessions/c1.md'], scan, 2);
    expect([...graph.files.keys()]).toEqual(['sessions/c1.md', 'sessions/c2.md', 'sessions/c3.md']);
    // The full walk sees the cycle of seven files.
    const blockers = await holds('sessions/c0.md');
    expect(blockers).toEqual([
      {
        kind: 'cycle',
        pattern: 'sessions/c1.md',
        cycle: [0, 1, 2, 3, 4, 5, 6].map((i) => `sessions/c${i}.md`),
      },
    ]);
  });

  it('scans through the daemon worker pool as well', async () => {
    const pool = new ScanPool({ size: 1 });
    try {
      await request('sessions/a.md', '#delegated-fix');
      const path = await request('sessions/item.md', '#delegated-fix', 'sessions/a.md');
      const blockers = await blockersOf(root, path, ['sessions/a.md'], (text) => pool.scan(text));
      expect(blockers.map((b) => b.kind)).toEqual(['pending']);
    } finally {
      await pool.close();
    }
  });
});
