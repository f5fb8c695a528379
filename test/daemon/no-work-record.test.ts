/**
 * The no-work record (src/daemon/no-work-record.ts): a file it holds is only statted by the next
 * first pass while its device, inode, size, mtime and ctime are all the same; any change, even
 * one that puts the size and mtime back, makes it read again.
 */
import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NoWorkRecord, RACY_MS } from '../../src/daemon/no-work-record.js';

const NEEDLES = ['delegated-', 'claimed-'];
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tree(): Promise<{ dir: string; record: string; file: (n: string) => string }> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-no-work-'));
  dirs.push(dir);
  return { dir, record: join(dir, 'state', 'no-work.json'), file: (n) => join(dir, n) };
}

/** A record holding `paths`, each read long after its last change. */
async function recorded(record: string, roots: string[], paths: string[]): Promise<void> {
  const first = await NoWorkRecord.open(record, NEEDLES, roots);
  for (const path of paths) {
    const info = statSync(path);
    first.keep(path, info, info.ctimeMs + RACY_MS);
  }
  await first.save();
}

describe('NoWorkRecord', () => {
  it('gives the stat of a file it holds unchanged, and carries it into the next record', async () => {
    const { dir, record, file } = await tree();
    writeFileSync(file('a.md'), '# A\n\nnothing to do\n');
    await recorded(record, [dir], [file('a.md')]);

    const second = await NoWorkRecord.open(record, NEEDLES, [dir]);
    expect(second.unchanged(file('a.md'))?.ino).toBe(statSync(file('a.md')).ino);
    expect(second.unchanged(file('other.md'))).toBeNull();
    await second.save();
    expect(second.counts).toEqual({ unread: 1, kept: 1 });

    const third = await NoWorkRecord.open(record, NEEDLES, [dir]);
    expect(third.unchanged(file('a.md'))).not.toBeNull();
  });

  it('reads a file written in place with its size and mtime put back (its ctime moved)', async () => {
    const { dir, record, file } = await tree();
    // Whole seconds, so that utimes can put the mtime back exactly.
    const SECONDS = 1_000_000_000;
    writeFileSync(file('a.md'), `# A\n\n${'nothing to do'.padEnd(24)}\n`);
    utimesSync(file('a.md'), SECONDS, SECONDS);
    const before = statSync(file('a.md'));
    await recorded(record, [dir], [file('a.md')]);
    // The same size, the old mtime: only the ctime tells.
    await waitForClockTick(before.ctimeMs);
    writeFileSync(file('a.md'), `# A\n\n${'#delegated-fix'.padEnd(24)}\n`);
    utimesSync(file('a.md'), SECONDS, SECONDS);
    const after = statSync(file('a.md'));
    expect([after.ino, after.size, after.mtimeMs]).toEqual([
      before.ino,
      before.size,
      before.mtimeMs,
    ]);

    const second = await NoWorkRecord.open(record, NEEDLES, [dir]);
    expect(second.unchanged(file('a.md'))).toBeNull();
  });

  it('reads a file replaced by another (a new inode), gone, or made a directory', async () => {
    const { dir, record, file } = await tree();
    for (const name of ['a.md', 'b.md', 'c.md']) writeFileSync(file(name), `# ${name}\n`);
    await recorded(record, [dir], ['a.md', 'b.md', 'c.md'].map(file));
    await writeFile(file('a.md.new'), '# a.md\n');
    const { rename, unlink } = await import('node:fs/promises');
    await rename(file('a.md.new'), file('a.md'));
    await unlink(file('b.md'));
    await unlink(file('c.md'));
    await mkdir(file('c.md'));

    const second = await NoWorkRecord.open(record, NEEDLES, [dir]);
    for (const name of ['a.md', 'b.md', 'c.md']) expect(second.unchanged(file(name))).toBeNull();
  });

  it('finds each file when the pass goes into subdirectories and back, as a sorted listing does', async () => {
    const { dir, record, file } = await tree();
    await mkdir(file('b'));
    await mkdir(file('d'));
    const order = ['a.md', 'b/x.md', 'c.md', 'd/y.md', 'e.md', 'b/z.md'];
    for (const name of order) writeFileSync(file(name), `# ${name}\n`);
    await recorded(record, [dir], order.map(file));
    const second = await NoWorkRecord.open(record, NEEDLES, [dir]);
    for (const name of order) expect(second.unchanged(file(name)), name).not.toBeNull();
    expect(second.unchanged(file('b/a.md'))).toBeNull();
    await second.save();
    expect(second.counts).toEqual({ unread: 6, kept: 6 });
  });

  it('never takes an entry whose name is not a string, nor the fields after it for a name', async () => {
    const { dir, record, file } = await tree();
    writeFileSync(file('a.md'), '# A\n');
    writeFileSync(file('5'), '# five\n');
    const a = statSync(file('a.md'));
    const five = statSync(file('5'));
    const fields = (info: typeof a) => [info.dev, info.ino, info.size, info.mtimeMs, info.ctimeMs];
    const dirs = { [`${dir}/`]: [5, ...fields(five), 'a.md', ...fields(a)] };
    await mkdir(join(dir, 'state'));
    await writeFile(record, JSON.stringify({ version: 1, needles: NEEDLES, paths: [dir], dirs }));
    const opened = await NoWorkRecord.open(record, NEEDLES, [dir]);
    expect(opened.unchanged(file('5'))).toBeNull();
    expect(opened.unchanged(file('a.md'))).not.toBeNull();
  });

  it('leaves out a file changed within RACY_MS before its read', async () => {
    const { dir, record, file } = await tree();
    writeFileSync(file('a.md'), '# A\n');
    const info = statSync(file('a.md'));
    const first = await NoWorkRecord.open(record, NEEDLES, [dir]);
    first.keep(file('a.md'), info, info.ctimeMs + RACY_MS - 1);
    await first.save();
    expect(first.counts.kept).toBe(0);
    const second = await NoWorkRecord.open(record, NEEDLES, [dir]);
    expect(second.unchanged(file('a.md'))).toBeNull();
  });

  it('uses no record of other needles, other watched paths, another version or damaged', async () => {
    const { dir, record, file } = await tree();
    writeFileSync(file('a.md'), '# A\n');
    await recorded(record, [dir], [file('a.md')]);
    const written = JSON.parse(await readFile(record, 'utf8')) as Record<string, unknown>;
    expect((await NoWorkRecord.open(record, ['delegated-'], [dir])).unchanged(file('a.md'))).toBe(
      null,
    );
    expect(
      (await NoWorkRecord.open(record, NEEDLES, [dir, '/elsewhere'])).unchanged(file('a.md')),
    ).toBeNull();
    const variants = [
      { ...written, version: 2 },
      { ...written, dirs: [] },
      { ...written, dirs: { [`${dir}/`]: ['a.md', 1, 2] } },
    ];
    for (const variant of variants) {
      await writeFile(record, JSON.stringify(variant));
      const opened = await NoWorkRecord.open(record, NEEDLES, [dir]);
      expect(opened.unchanged(file('a.md'))).toBeNull();
    }
    await writeFile(record, '{"version":1,"needles":');
    expect((await NoWorkRecord.open(record, NEEDLES, [dir])).unchanged(file('a.md'))).toBeNull();
    // An entry of the wrong type is never the same as a stat.
    const stats = statSync(file('a.md'));
    const typed = ['a.md', stats.dev, String(stats.ino), stats.size, stats.mtimeMs, stats.ctimeMs];
    await writeFile(record, JSON.stringify({ ...written, dirs: { [`${dir}/`]: typed } }));
    expect((await NoWorkRecord.open(record, NEEDLES, [dir])).unchanged(file('a.md'))).toBeNull();
  });
});

/** Waits (by condition, with a deadline) until a new write would get a later ctime. */
async function waitForClockTick(ctimeMs: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  const probe = join(tmpdir(), `engine-tick-${process.pid}`);
  try {
    for (;;) {
      writeFileSync(probe, '');
      if (statSync(probe).ctimeMs > ctimeMs) return;
      if (Date.now() > deadline) throw new Error('the file clock did not move in 5 s');
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    await rm(probe, { force: true });
  }
}
