/**
 * `find`'s prefilter gives the same answer however its units are shared out: all on the main
 * thread, all in a worker, or both. Real files, a real worker thread.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FILES_PER_UNIT,
  scanRead,
  workerResult,
  type PrefilterWorkerData,
  type UnitRead,
  type UnitResult,
} from '../../src/tags/prefilter-unit.js';
import { startWorker } from '../../src/tags/start-worker.js';
import {
  prefilterTree,
  readsOnMainThread,
  type PrefilterOptions,
} from '../../src/tags/prefilter-tree.js';

const NEEDLE = Buffer.from('#needs-x');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-prefilter-'));
  // A flat directory larger than one unit, nested directories, and files that are skipped.
  await mkdir(join(dir, 'flat'));
  for (let i = 0; i < FILES_PER_UNIT * 2 + 10; i++) {
    const text = i % 7 === 0 ? `# F${i}\n**Tags**: #needs-x\n` : `# F${i}\nplain\n`;
    await writeFile(join(dir, 'flat', `f${i}.md`), text);
  }
  for (let d = 0; d < 12; d++) {
    await mkdir(join(dir, 'deep', `d${d}`, 'inner'), { recursive: true });
    await writeFile(join(dir, 'deep', `d${d}`, 'a.md'), 'Text #needs-x\n');
    await writeFile(join(dir, 'deep', `d${d}`, 'inner', 'b.md'), '`#needs-x` only in code\n');
    await writeFile(join(dir, 'deep', `d${d}`, 'inner', 'c.md'), '<b>#needs-x</b>\n');
  }
  await writeFile(join(dir, 'binary.md'), Buffer.from([0x23, 0, 0xff, ...NEEDLE]));
  // Few files holding the needle: a worker leaves their scan to the main thread.
  await mkdir(join(dir, 'sparse'));
  for (let i = 0; i < 30; i++) {
    const text = i === 3 ? 'See `#needs-x` and #needs-x\n' : `# S${i}\n`;
    await writeFile(join(dir, 'sparse', `s${i}.md`), text);
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect(options: PrefilterOptions) {
  const results: UnitResult[] = [];
  for await (const result of prefilterTree([dir], NEEDLE, options)) results.push(result);
  const candidates = results.flatMap((r) => r.candidates);
  const summary = candidates
    .map((c) => `${c.path.slice(dir.length)} ${c.occurrences?.map((o) => o.tag).join(',') ?? '?'}`)
    .sort();
  const texts = candidates
    .map((c) => `${c.path.slice(dir.length)} ${c.text === '' ? 'none' : 'text'}`)
    .sort();
  const skipped = results.flatMap((r) =>
    r.skipped.map((s) => `${s.path.slice(dir.length)}: ${s.reason}`),
  );
  return { summary, skipped: skipped.sort(), units: results.length, texts };
}

describe('prefilterTree', () => {
  it('finds the same candidates on the main thread, in a worker, and on both', async () => {
    const alone = await collect({ threads: 1 });
    expect(alone.summary).toContain('/flat/f0.md #needs-x');
    expect(alone.summary).toContain('/deep/d0/a.md #needs-x');
    expect(alone.summary).toContain('/deep/d0/inner/b.md ');
    // HTML is left to remark.
    expect(alone.summary).toContain('/deep/d0/inner/c.md ?');
    expect(alone.summary).toContain('/sparse/s3.md #needs-x');
    expect(alone.summary.filter((s) => s.startsWith('/flat/'))).toHaveLength(
      Math.ceil((FILES_PER_UNIT * 2 + 10) / 7),
    );
    expect(alone.skipped).toContain('/binary.md: not UTF-8 text');
    // A large directory is split into batches, each its own unit.
    expect(alone.units).toBeGreaterThanOrEqual(1 + 1 + 12 * 2 + 3);

    expect(await collect({ threads: 2, inline: false })).toEqual(alone);
    expect(await collect({ threads: 3 })).toEqual(alone);
  });

  it('leaves out the texts the fast path read when told, on every thread; remark still gets its', async () => {
    const withTexts = await collect({ threads: 1 });
    expect(withTexts.texts.every((t) => t.endsWith(' text'))).toBe(true);
    for (const options of [{ threads: 1 }, { threads: 2, inline: false }, { threads: 3 }]) {
      const without = await collect({ ...options, texts: false });
      expect({ ...without, texts: [] }).toEqual({ ...withTexts, texts: [] });
      expect(without.texts).toContain('/deep/d0/inner/c.md text');
      expect(without.texts).toContain('/deep/d0/a.md none');
      expect(without.texts.filter((t) => t.endsWith(' text'))).toHaveLength(12);
      expect(without.texts).toContain('/sparse/s3.md none');
    }
  });
});

describe("a worker's result", () => {
  const read = (held: number, files: number): UnitRead => ({
    units: [],
    files,
    held: Array.from({ length: held }, (_, i) => ({ path: `f${i}.md`, text: 'Text #needs-x\n' })),
    skipped: [],
  });

  it('leaves the scan of a few held files to the main thread, and scans many itself', () => {
    expect(workerResult(read(3, 100), false)).toEqual(read(3, 100));
    expect(workerResult(read(0, 100), false)).toEqual(read(0, 100));
    const dense = workerResult(read(20, 100), false);
    expect('candidates' in dense && dense.candidates.map((c) => c.occurrences?.[0]?.tag)).toEqual(
      Array.from({ length: 20 }, () => '#needs-x'),
    );
    expect(scanRead(read(3, 100), false).candidates).toHaveLength(3);
  });
});

describe('the prefilter worker', () => {
  it('sends back the reads of a sparse directory unscanned, and scans a dense one', async () => {
    const worker = startWorker('prefilter-worker', {
      workerData: { needle: NEEDLE, texts: false } satisfies PrefilterWorkerData,
    });
    try {
      const replies: unknown[] = [];
      const next = (): Promise<unknown> =>
        new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
      expect(await next()).toEqual({ ready: true });
      for (const sub of ['sparse', 'deep/d0']) {
        const reply = next();
        worker.postMessage({ kind: 'directory', path: join(dir, sub) });
        replies.push(await reply);
      }
      const [sparse, dense] = replies as [UnitRead, UnitResult];
      expect(sparse.held.map((h) => h.path)).toEqual([join(dir, 'sparse', 's3.md')]);
      expect(sparse.files).toBe(30);
      expect(dense.candidates.map((c) => [c.path, c.text, c.occurrences?.length])).toEqual([
        [join(dir, 'deep', 'd0', 'a.md'), '', 1],
      ]);
    } finally {
      await worker.terminate();
    }
  });
});

describe('who reads: the main thread', () => {
  it('always by default, on 2 cores too; told not to, only when it has no worker', () => {
    expect(readsOnMainThread(undefined, 1)).toBe(true);
    expect(readsOnMainThread(undefined, 3)).toBe(true);
    expect(readsOnMainThread(undefined, 0)).toBe(true);
    expect(readsOnMainThread(true, 1)).toBe(true);
    expect(readsOnMainThread(false, 1)).toBe(false);
    expect(readsOnMainThread(false, 0)).toBe(true);
  });
});
