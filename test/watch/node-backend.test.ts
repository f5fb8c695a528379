/**
 * The node backend (fs.watch on each directory) on real files: it holds one inotify watch per
 * directory of the tree, no more, and lets go of a directory that leaves the tree. The request
 * watcher's suites (request-watcher.test.ts) run it through the behaviours every backend shares.
 */
import { mkdirSync, renameSync, symlinkSync, watch, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { IGNORE_RULES } from '../../src/tags/walk-markdown.js';
import {
  createNodeBackend,
  nodeBackend,
  type WatchDirectory,
} from '../../src/watch/node-backend.js';
import type { Subscription, WatchEventType } from '../../src/watch/watch-backend.js';
import { inotifyWatches } from '../helpers/inotify-watches.js';
import { waitFor } from '../helpers/wait-for.js';

let dir: string;
let subscription: Subscription | null = null;
let events: { type: WatchEventType; path: string }[] = [];
let problems: string[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-node-watch-'));
  events = [];
  problems = [];
});

afterEach(async () => {
  await subscription?.close();
  subscription = null;
  await rm(dir, { recursive: true, force: true });
});

async function subscribe(root: string, backend = nodeBackend): Promise<void> {
  subscription = await backend.subscribe(root, IGNORE_RULES, {
    onEvent: (type, path) => events.push({ type, path }),
    onError: (error) => problems.push(error.message),
    onStale: () => problems.push('stale'),
  });
}

const seen = (path: string) => events.some((e) => e.path === path);

it('holds one watch per directory, lets go of a directory moved out, and of all on close', async () => {
  const root = join(dir, 'root');
  await mkdir(join(root, 'a', 'b'), { recursive: true });
  await mkdir(join(root, 'node_modules', 'pkg'), { recursive: true });
  const before = inotifyWatches();
  await subscribe(root);
  // root, a, a/b: node_modules is never watched.
  expect(inotifyWatches() - before).toBe(3);

  await mkdir(join(root, 'new', 'deep', 'er'), { recursive: true });
  await writeFile(join(root, 'new', 'deep', 'er', 'x.md'), 'x');
  await waitFor(() => seen(join(root, 'new', 'deep', 'er', 'x.md')), { timeoutMs: 10_000 });
  await waitFor(() => inotifyWatches() - before === 6, { timeoutMs: 10_000 });

  // Moved out: its watches (a, a/b) are closed, and what is written there is not reported.
  await rename(join(root, 'a'), join(dir, 'outside'));
  await waitFor(() => inotifyWatches() - before === 4, { timeoutMs: 10_000 });
  await writeFile(join(dir, 'outside', 'b', 'late.md'), 'x');
  // Events come in order: once the next one in the tree is reported, that write's would have been.
  await writeFile(join(root, 'sentinel.md'), 'x');
  await waitFor(() => seen(join(root, 'sentinel.md')), { timeoutMs: 10_000 });
  expect(events.filter((e) => e.path.endsWith('late.md'))).toEqual([]);
  expect(events).toContainEqual({ type: 'unlink', path: join(root, 'a') });

  await subscription?.close();
  subscription = null;
  expect(inotifyWatches()).toBe(before);
  const count = events.length;
  await writeFile(join(root, 'after-close.md'), 'x');
  expect(events.length).toBe(count);
  expect(problems).toEqual([]);
});

it('reports events in the order they came: a new directory listed before the next event', async () => {
  const root = join(dir, 'root');
  await mkdir(root);
  await subscribe(root);
  // As the daemon's sync relies on: the last event reported proves all before it reported.
  for (let round = 0; round < 5; round++) {
    const file = join(root, `d${round}`, 'deep', 'x.md');
    const sentinel = join(root, `sentinel-${round}.md`);
    // At once, so that inotify gives all their events in one read.
    mkdirSync(join(root, `d${round}`, 'deep'), { recursive: true });
    writeFileSync(file, 'x');
    writeFileSync(sentinel, 'x');
    await waitFor(() => seen(sentinel), { timeoutMs: 10_000 });
    const at = (path: string) => events.findIndex((e) => e.path === path);
    expect(at(file)).toBeGreaterThanOrEqual(0);
    expect(at(file)).toBeLessThan(at(sentinel));
  }
  expect(problems).toEqual([]);
});

it('rejects a root that is not a directory, and one that does not exist', async () => {
  await writeFile(join(dir, 'file.md'), 'x');
  await expect(subscribe(join(dir, 'file.md'))).rejects.toThrow(/not a directory/);
  await expect(subscribe(join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
});

/** fs.watch, failing with `code` (as the kernel does) for the directories `which` names. */
function failing(code: 'ENOSPC' | 'ENOENT', which: (dir: string) => boolean): WatchDirectory {
  return (d, listener) => {
    if (!which(d)) return watch(d, { persistent: false }, (type, entry) => listener(type, entry));
    throw Object.assign(new Error(`${code}: watch '${d}'`), { code });
  };
}

it('is not had at all when a directory below the root cannot be watched (out of watches)', async () => {
  const root = join(dir, 'root');
  await mkdir(join(root, 'a', 'b'), { recursive: true });
  const before = inotifyWatches();
  const backend = createNodeBackend(failing('ENOSPC', (d) => d === join(root, 'a', 'b')));
  // Watched in part, the changes in a/b would go unseen: the caller tries again later.
  await expect(subscribe(root, backend)).rejects.toThrow(/ENOSPC/);
  expect(inotifyWatches()).toBe(before);
  expect(problems).toEqual([]);
});

it('says it is stale when a directory that came cannot be watched (out of watches)', async () => {
  const root = join(dir, 'root');
  await mkdir(root);
  await subscribe(root, createNodeBackend(failing('ENOSPC', (d) => d.endsWith('full'))));
  await mkdir(join(root, 'full'));
  await waitFor(() => problems.includes('stale'), { timeoutMs: 10_000 });
  expect(problems).toEqual([expect.stringMatching(/ENOSPC/), 'stale']);
});

it('goes on when a directory that came is gone before its watch opened', async () => {
  const root = join(dir, 'root');
  await mkdir(root);
  await subscribe(root, createNodeBackend(failing('ENOENT', (d) => d.endsWith('vanished'))));
  await mkdir(join(root, 'vanished'));
  await writeFile(join(root, 'sentinel.md'), 'x');
  await waitFor(() => seen(join(root, 'sentinel.md')), { timeoutMs: 10_000 });
  // No loss: the reconcile pass covers a directory that went.
  expect(problems).toEqual([]);
});

it('lets go of a directory swapped for a symlink as its watch opened, not watching the target', async () => {
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  await mkdir(join(root, 'a'), { recursive: true });
  await mkdir(join(outside, 'deep'), { recursive: true });
  await subscribe(root);
  const before = inotifyWatches();
  await subscription?.close();
  // The swap made between the backend's lstat of root/a and its watch (the race, made certain),
  // and an event from the target reported before the backend could check (sub: a directory,
  // which looked at through the link would be watched and reported).
  let swapped = false;
  const swapping: WatchDirectory = (d, listener) => {
    if (d !== join(root, 'a') || swapped)
      return watch(d, { persistent: false }, (type, entry) => listener(type, entry));
    swapped = true;
    renameSync(d, join(dir, 'a-moved'));
    symlinkSync(outside, d);
    const watcher = watch(d, { persistent: false }, (type, entry) => listener(type, entry));
    mkdirSync(join(outside, 'sub'));
    queueMicrotask(() => listener('rename', 'sub'));
    queueMicrotask(() => listener('change', 'sub'));
    return watcher;
  };
  events = [];
  await subscribe(root, createNodeBackend(swapping));
  expect(swapped).toBe(true);
  // root alone: neither the link's target nor its directory below is watched.
  expect(inotifyWatches()).toBe(before - 1);
  await writeFile(join(outside, 'deep', 'x.md'), 'x');
  await writeFile(join(root, 'sentinel.md'), 'x');
  await waitFor(() => seen(join(root, 'sentinel.md')), { timeoutMs: 10_000 });
  // The link itself is reported (its parent saw it come); nothing through it.
  expect(events.filter((e) => e.path.startsWith(join(root, 'a') + sep))).toEqual([]);
  expect(problems).toEqual([]);
});

it('rejects a root swapped for a symlink as its watch opened', async () => {
  const root = join(dir, 'root');
  await mkdir(join(root, 'a'), { recursive: true });
  await mkdir(join(dir, 'outside', 'b'), { recursive: true });
  const before = inotifyWatches();
  const swapping: WatchDirectory = (d, listener) => {
    if (d === root) {
      renameSync(root, join(dir, 'root-moved'));
      symlinkSync(join(dir, 'outside'), root);
    }
    return watch(d, { persistent: false }, (type, entry) => listener(type, entry));
  };
  await expect(subscribe(root, createNodeBackend(swapping))).rejects.toThrow(/changed while/);
  expect(inotifyWatches()).toBe(before);
  expect(events).toEqual([]);
});

it('keeps no watch it opened as it was closed', async () => {
  const root = join(dir, 'root');
  await mkdir(root);
  const before = inotifyWatches();
  let closing: Promise<void> | null = null;
  const closingAtOnce: WatchDirectory = (d, listener) => {
    const watcher = watch(d, { persistent: false }, (type, entry) => listener(type, entry));
    if (d.endsWith('late')) closing = subscription?.close() ?? null;
    return watcher;
  };
  await subscribe(root, createNodeBackend(closingAtOnce));
  await mkdir(join(root, 'late'));
  await waitFor(() => closing !== null, { timeoutMs: 10_000 });
  await closing;
  subscription = null;
  await waitFor(() => inotifyWatches() === before, { timeoutMs: 10_000 });
  expect(problems).toEqual([]);
});
