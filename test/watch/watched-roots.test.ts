/**
 * WatchedRoots with the real @parcel/watcher backend behind a gate that fails its first
 * subscriptions, as a full inotify table (ENOSPC) would: the watch is retried with a growing,
 * bounded delay, the failure is said once and the recovery once, and changes then arrive through
 * the watch. WatchedRoots never polls files, so every change it reports came from a watch.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { loadWatchBackend } from '../../src/watch/load-watch-backend.js';
import type { WatchBackend } from '../../src/watch/watch-backend.js';
import { WatchedRoots } from '../../src/watch/watched-roots.js';
import { waitFor } from '../helpers/wait-for.js';

let dir: string | undefined;
let roots: WatchedRoots | undefined;

afterEach(async () => {
  await roots?.close();
  roots = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

it('retries a watch that failed to open, with a bounded backoff, and says so once each way', async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-watched-roots-'));
  const root = join(dir, 'root');
  await mkdir(root);
  const parcel = await loadWatchBackend('parcel', () => undefined);
  expect(parcel.kind).toBe('parcel');
  const FAILURES = 4;
  const attempts: number[] = [];
  const gated: WatchBackend = {
    kind: 'parcel',
    subscribe: async (path, ignore, handlers) => {
      attempts.push(Date.now());
      if (attempts.length <= FAILURES)
        throw new Error(`inotify_add_watch failed: No space left on device (${attempts.length})`);
      return parcel.subscribe(path, ignore, handlers);
    },
  };
  const errors: string[] = [];
  const restored: string[] = [];
  const changes: string[] = [];
  let reopened = 0;
  roots = new WatchedRoots({
    paths: [root],
    backend: gated,
    onChange: (path) => changes.push(path),
    onError: (error) => errors.push(error.message),
    onReopened: () => reopened++,
    onRestored: (message) => restored.push(message),
    checkIntervalMs: 20,
    retry: { firstMs: 100, maxMs: 300 },
    meanwhile: 'until then the reconcile pass finds its changes',
  });
  await roots.start();
  expect(errors).toEqual([
    `cannot watch ${root}: inotify_add_watch failed: No space left on device (1); trying again until it opens; until then the reconcile pass finds its changes`,
  ]);

  await waitFor(() => restored.length > 0, {
    message: `the watch to open; tries ${attempts.length}`,
  });
  expect(restored).toEqual([`watching ${root} again`]);
  expect(attempts).toHaveLength(FAILURES + 1);
  // 100, 200, then 300 ms apart (the bound), never sooner.
  const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
  expect(gaps.map((gap, i) => gap >= [100, 200, 300, 300][i]!)).toEqual([true, true, true, true]);
  expect(errors).toHaveLength(1);
  expect(reopened).toBe(1);

  const file = join(root, 'REQ.md');
  await writeFile(file, '# R\n');
  await waitFor(() => changes.includes(file), { message: `${file} through the watch` });
});
