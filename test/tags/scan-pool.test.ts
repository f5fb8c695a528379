/**
 * The scan pool's worker threads, counted in /proc/self/status: one idle past its time is ended,
 * and the next scan starts one again.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ScanPool } from '../../src/tags/scan-pool.js';
import { waitFor } from '../helpers/wait-for.js';

const pools: ScanPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

function threads(): number {
  return Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
}

describe('ScanPool', () => {
  it('ends a worker idle past idleMs, and starts one again for the next scan', async () => {
    const pool = new ScanPool({ size: 1, idleMs: 300 });
    pools.push(pool);
    const before = threads();
    const text = '# A\n\n**Tags**: #needs-a\n';
    expect((await pool.scan(text)).occurrences.map((o) => o.tag)).toEqual(['#needs-a']);
    expect(threads()).toBeGreaterThan(before);
    await waitFor(() => threads() === before, { message: 'the idle worker ended' });
    expect((await pool.scan(text)).occurrences.map((o) => o.tag)).toEqual(['#needs-a']);
  });
});
