/**
 * The live tag index never answers wrong: random writes (files written, removed, renamed,
 * directories made, moved and removed), each followed at once by a sync and a find from the
 * index, which must equal findTaggedFiles over the files. Real files, the real watch
 * (RequestWatcher with the default backend), the real scan pool.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findInIndex } from '../../src/index/find-in-index.js';
import { IndexSync, removeDeadSyncFiles } from '../../src/index/index-sync.js';
import { TagIndex } from '../../src/index/tag-index.js';
import { findTaggedFiles } from '../../src/tags/find-tagged-files.js';
import { ScanPool } from '../../src/tags/scan-pool.js';
import { parseTagPattern } from '../../src/tags/tag-name.js';
import { RequestWatcher } from '../../src/watch/request-watcher.js';
import { rng } from '../../scripts/bench/lib.mjs';
import { waitFor } from '../helpers/wait-for.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TEXTS = [
  '# A\n\n**Tags**: #needs-a #P1\n',
  '# B\n\nProse #needs-b and `#needs-c` in code.\n',
  '---\ntags: [needs-d]\n---\n# D\n',
  '# E\n\n```\n#needs-e\n```\n<!-- #needs-e -->\n',
  '# F\n\nno tag\n',
  '---\ntags: [needs-f\n---\n# broken front matter #needs-f\n',
  '# G\n\n[#needs-g](#needs-g) #needs-h\n',
];
const DIRS = ['', 'x', 'x/y', 'z'];
const NAMES = ['a.md', 'b.md', 'c.markdown', 'd.txt'];

/** A watched directory and its built index; `prepare` writes into it before. */
async function setUp(prepare?: (dir: string) => Promise<void>): Promise<{
  dir: string;
  index: TagIndex;
  sync: IndexSync;
  pool: ScanPool;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-index-'));
  await prepare?.(dir);
  const pool = new ScanPool();
  const sync = new IndexSync();
  const watcher: RequestWatcher = new RequestWatcher({
    paths: [dir],
    debounceMs: 60_000,
    rescanIntervalMs: 60_000,
    onSettled: () => undefined,
    onError: () => undefined,
    onEvent: (path) => {
      if (!sync.observe(path)) index.mark(path);
    },
  });
  const index = new TagIndex(
    [dir],
    (text) => pool.scan(text),
    () => watcher.eventsComplete,
  );
  cleanups.push(async () => {
    await watcher.close();
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  });
  await watcher.start();
  // The catch-up pass after the first one: until it has run, the index is not trusted.
  await waitFor(() => watcher.eventsComplete, { message: 'the catch-up pass after start' });
  await index.build();
  return { dir, index, sync, pool };
}

/** One random change to the tree. */
async function change(dir: string, next: () => number): Promise<string> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const sub = pick(DIRS);
  const path = join(dir, sub, pick(NAMES));
  const roll = next();
  if (roll < 0.55) {
    await mkdir(join(dir, sub), { recursive: true });
    await writeFile(path, pick(TEXTS));
    return `write ${path}`;
  }
  if (roll < 0.7) {
    await rm(path, { force: true });
    return `remove ${path}`;
  }
  if (roll < 0.85) {
    const to = join(dir, pick(DIRS), pick(NAMES));
    await mkdir(join(to, '..'), { recursive: true });
    await rename(path, to).catch(() => undefined);
    return `rename ${path} ${to}`;
  }
  if (roll < 0.93 && sub !== '') {
    const to = join(dir, `moved-${Math.floor(next() * 3)}`);
    await rm(to, { recursive: true, force: true });
    await rename(join(dir, sub), to).catch(() => undefined);
    return `move ${sub} ${to}`;
  }
  await rm(join(dir, sub || 'z'), { recursive: true, force: true });
  return `remove ${sub || 'z'}/`;
}

/** find's answer from the index, and the one from reading the files (paths under `root`). */
async function bothAnswers(
  dir: string,
  index: TagIndex,
  pool: ScanPool,
  pattern: ReturnType<typeof parseTagPattern>,
  tagsOnly: boolean,
): Promise<{ fromIndex: unknown; expected: unknown }> {
  const paths = [{ given: 'root', absolute: dir }];
  const fromIndex = await findInIndex(index, { pattern, tagsOnly, paths }, pool);
  const files = await findTaggedFiles({ paths: [dir], pattern, tagsOnly, pool });
  const expected = {
    matches: files.matches.map((m) => ({
      path: join('root', m.path.slice(dir.length)),
      occurrences: m.occurrences.map(({ tag, line, column, place }) => ({
        tag,
        line,
        column,
        place,
      })),
    })),
    skipped: files.skipped.map((s) => ({ ...s, path: join('root', s.path.slice(dir.length)) })),
    problems: files.problems.map((p) => ({
      ...p,
      path: join('root', p.path.slice(dir.length)),
    })),
  };
  return { fromIndex, expected };
}

describe('the live tag index', () => {
  it('answers every find after random writes as the files do', async () => {
    const seed = Date.now() % 100_000;
    // The benchmarks' seeded PRNG: a failure names its seed and replays.
    const next = rng(seed);
    const { dir, index, sync, pool } = await setUp();
    const done: string[] = [];
    let answered = 0;
    for (let round = 0; round < 60; round++) {
      done.push(await change(dir, next));
      // As the daemon does: no answer from the index while its watch may have lost an event
      // (a directory moved in makes parcel's watch stale, opened again): the client reads files.
      if (!(await sync.sync(dir, 5000))) continue;
      await index.flush();
      if (!index.trusted) continue;
      answered++;
      const tagsOnly = next() < 0.3;
      const pattern = parseTagPattern(next() < 0.5 ? '#needs-*' : '#needs-a');
      const answers = await bothAnswers(dir, index, pool, pattern, tagsOnly);
      expect(answers.fromIndex, `seed ${seed}, after:\n${done.join('\n')}`).toEqual(
        answers.expected,
      );
    }
    expect(answered).toBeGreaterThan(30);
  }, 120_000);

  it('keeps only files that carry a tag', async () => {
    const { dir, index, sync } = await setUp();
    await writeFile(join(dir, 'tagged.md'), '# T\n\n**Tags**: #needs-a\n');
    await writeFile(join(dir, 'plain.md'), '# P\n\nno tag at all\n');
    await sync.sync(dir, 5000);
    await index.flush();
    expect(index.size).toBe(1);
  });

  it('lists the files below a directory once until a file comes or goes', async () => {
    const { dir, index, sync } = await setUp(async (d) => {
      await mkdir(join(d, 'x'));
      await mkdir(join(d, 'z'));
      await writeFile(join(d, 'x', 'a.md'), TEXTS[0] as string);
      await writeFile(join(d, 'x', 'b.md'), TEXTS[1] as string);
      await writeFile(join(d, 'z', 'c.md'), TEXTS[0] as string);
    });
    const x = join(dir, 'x');
    const first = index.filesBelow(x);
    expect(first).toEqual([join(x, 'a.md'), join(x, 'b.md')]);
    // Each status asks it: a lookup while nothing came or went.
    expect(index.filesBelow(x)).toBe(first);
    await writeFile(join(x, 'c.md'), TEXTS[0] as string);
    await synced(dir, index, sync);
    expect(index.filesBelow(x)).toEqual([join(x, 'a.md'), join(x, 'b.md'), join(x, 'c.md')]);
    await rm(join(x, 'a.md'));
    await synced(dir, index, sync);
    expect(index.filesBelow(x)).toEqual([join(x, 'b.md'), join(x, 'c.md')]);
    // A symlink is listed while it leads to a file, checked at each ask: no event at its path.
    await symlink(join(dir, 'z', 'c.md'), join(x, 'd.md'));
    await synced(dir, index, sync);
    expect(index.filesBelow(x)).toEqual([join(x, 'b.md'), join(x, 'c.md'), join(x, 'd.md')]);
    await rm(join(dir, 'z'), { recursive: true });
    await synced(dir, index, sync);
    expect(index.filesBelow(x)).toEqual([join(x, 'b.md'), join(x, 'c.md')]);
  });

  it("sees a user's file named like a sync file", async () => {
    const { dir, index, sync, pool } = await setUp();
    await synced(dir, index, sync);
    await writeFile(join(dir, '.engine-sync-notes.md'), '# N\n\n**Tags**: #needs-a\n');
    await writeFile(join(dir, `.engine-sync-${process.pid}-99.md`), '# M\n\n#needs-a\n');
    await synced(dir, index, sync);
    const answers = await bothAnswers(dir, index, pool, parseTagPattern('#needs-a'), false);
    expect(answers.fromIndex).toEqual(answers.expected);
    expect(index.size).toBe(2);
  });
});

describe('a markdown symlink', () => {
  it('dangling, then valid with no event at its path: found', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'engine-outside-'));
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    const { dir, index, sync, pool } = await setUp(async (d) => {
      await symlink(join(outside, 'early.md'), join(d, 'early.md'));
    });
    await symlink(join(outside, 'late.md'), join(dir, 'late.md'));
    await symlink(outside, join(dir, 'dir.md'));
    await synced(dir, index, sync);
    const pattern = parseTagPattern('#needs-a');
    const before = await bothAnswers(dir, index, pool, pattern, false);
    expect(before.fromIndex).toEqual(before.expected);
    for (const name of ['early.md', 'late.md'])
      await writeFile(join(outside, name), '# L\n\n**Tags**: #needs-a\n');
    await synced(dir, index, sync);
    const after = await bothAnswers(dir, index, pool, pattern, false);
    expect(after.fromIndex).toEqual(after.expected);
    expect(after.expected).toMatchObject({
      matches: [{ path: 'root/early.md' }, { path: 'root/late.md' }],
    });
  });
});

describe('a file whose name is not UTF-8', () => {
  it('is named in a warning, as find over the files does', async () => {
    const named = (dir: string, name: string): Buffer =>
      Buffer.concat([Buffer.from(`${dir}/${name}-`), Buffer.from([0xff]), Buffer.from('.md')]);
    const text = '# N\n\n**Tags**: #needs-a\n';
    const { dir, index, sync, pool } = await setUp((d) => writeFile(named(d, 'early'), text));
    await writeFile(named(dir, 'late'), text);
    await synced(dir, index, sync);
    const answers = await bothAnswers(dir, index, pool, parseTagPattern('#needs-a'), false);
    expect(answers.fromIndex).toEqual(answers.expected);
    expect(answers.expected).toMatchObject({
      skipped: [
        { path: 'root/early-\uFFFD.md', reason: 'its name is not UTF-8: not read' },
        { path: 'root/late-\uFFFD.md', reason: 'its name is not UTF-8: not read' },
      ],
    });
  });
});

describe('sync files a killed daemon left', () => {
  it('are removed: only the exact pattern, only of a process that no longer runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-sync-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const dead = Number(child.stdout.toString());
    const names = [
      `.engine-sync-${dead}-1`,
      `.engine-sync-${dead}-12`,
      `.engine-sync-${process.pid}-1`,
      `.engine-sync-${dead}-1.md`,
      '.engine-sync-notes.md',
    ];
    for (const name of names) await writeFile(join(dir, name), '');
    removeDeadSyncFiles(dir);
    expect((await readdir(dir)).sort()).toEqual(names.slice(2).sort());
  });
});

/** Every write made so far is in the index, which is trusted. */
async function synced(dir: string, index: TagIndex, sync: IndexSync): Promise<void> {
  expect(await sync.sync(dir, 5000)).toBe(true);
  await index.flush();
  expect(index.trusted).toBe(true);
}

describe('closed while it is built', () => {
  it('ends the build at its next file, incomplete, so a stopping daemon need not wait for it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-index-close-'));
    const pool = new ScanPool();
    cleanups.push(async () => {
      await pool.close();
      await rm(dir, { recursive: true, force: true });
    });
    for (let i = 0; i < 200; i++) await writeFile(join(dir, `f${i}.md`), `# ${i}\n\n#needs-x\n`);
    let reads = 0;
    const index = new TagIndex(
      [dir],
      (text) => pool.scan(text),
      () => true,
    );
    const built = index.build(() => {
      reads++;
      return async () => undefined;
    });
    await waitFor(() => reads > 0, { message: 'the build under way' });
    await index.close();
    await built;
    expect(reads).toBeLessThan(200);
    expect(index.trusted).toBe(false);
  });
});
