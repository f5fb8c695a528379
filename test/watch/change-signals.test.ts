/**
 * ChangeSignals: a waiter wakes when a file it names is written or renamed into place, remembers a
 * change that came before it asked, falls back to its timeout when nothing (or no watch) tells it,
 * and is woken when the signals close.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChangeSignals } from '../../src/watch/change-signals.js';
import { waitFor } from '../helpers/wait-for.js';

/** Longer than any test may run: a wait that ends was ended by the event, not by the timeout. */
const NEVER = 10 * 60_000;

let dir: string;
let signals: ChangeSignals;
let errors: Error[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-signals-'));
  errors = [];
  signals = new ChangeSignals((error) => errors.push(error));
});

afterEach(async () => {
  signals.close();
  await rm(dir, { recursive: true, force: true });
});

describe('ChangeSignals', () => {
  it('wakes a waiter when its file is written, and when one is renamed over it', async () => {
    const file = join(dir, 'REQ.md');
    await writeFile(file, 'a');
    const changes = signals.subscribe([file, join(dir, '.exit')]);
    const written = changes.next(NEVER);
    await writeFile(file, 'b');
    await written;
    const renamed = changes.next(NEVER);
    await writeFile(join(dir, '.exit.tmp'), 'code=0\n');
    await rename(join(dir, '.exit.tmp'), join(dir, '.exit'));
    await renamed;
    changes.close();
    expect(errors).toEqual([]);
  });

  it('remembers a change made before the waiter asks', async () => {
    const file = join(dir, 'REQ.md');
    const changes = signals.subscribe([file]);
    await writeFile(file, 'x');
    // The event arrives after the write returns; once it has, next() resolves at once.
    await waitFor(
      () =>
        Promise.race([
          changes.next(NEVER).then(() => true),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), 50)),
        ]),
      { message: 'the remembered change' },
    );
    changes.close();
  });

  it('falls back to the timeout: with no change, and when the directory cannot be watched', async () => {
    const quiet = signals.subscribe([join(dir, 'quiet.md')]);
    await quiet.next(20);
    quiet.close();
    const missing = signals.subscribe([join(dir, 'no-such-dir', 'REQ.md')]);
    await missing.next(20);
    missing.close();
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/cannot watch/)]);
  });

  it('wakes every waiter when closed, and then waits no more', async () => {
    const changes = signals.subscribe([join(dir, 'REQ.md')]);
    const waiting = changes.next(NEVER);
    signals.close();
    await waiting;
    await changes.next(NEVER);
    const late = signals.subscribe([join(dir, 'late.md')]);
    await late.next(NEVER);
  });
});
