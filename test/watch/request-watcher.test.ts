/**
 * The request watcher on real files with each watch backend. The reconcile period is an hour, so
 * every change below is noticed by the watch (or by the reconcile a reopened watch asks for),
 * never by a periodic pass.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import {
  appendFile,
  mkdir,
  mkdtemp,
  rename,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IGNORE_RULES } from '../../src/tags/walk-markdown.js';
import { loadWatchBackend } from '../../src/watch/load-watch-backend.js';
import { FLOOD_EVENTS, RequestWatcher } from '../../src/watch/request-watcher.js';
import {
  WATCHER_KINDS,
  type WatchBackend,
  type WatcherKind,
} from '../../src/watch/watch-backend.js';
import { watchHeadroom, watchHeadroomLow } from '../../src/watch/watch-headroom.js';
import { inotifyWatches } from '../helpers/inotify-watches.js';
import { waitFor } from '../helpers/wait-for.js';

let dir: string;
let watcher: RequestWatcher | null = null;
let settled: string[] = [];
let errors: Error[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-watch-'));
  settled = [];
  errors = [];
});

afterEach(async () => {
  await watcher?.close();
  watcher = null;
  await rm(dir, { recursive: true, force: true });
});

async function open(kind: WatcherKind, paths = [join(dir, 'root')]): Promise<void> {
  watcher = new RequestWatcher({
    paths,
    debounceMs: 50,
    rescanIntervalMs: 3_600_000,
    watcher: kind,
    onSettled: (path) => settled.push(path),
    onError: (error) => errors.push(error),
  });
  await watcher.start();
}

const times = (path: string): number => settled.filter((p) => p === path).length;

/** Waits until `path` has settled `count` times in all. */
async function reported(path: string, count = 1): Promise<void> {
  await waitFor(() => times(path) >= count, {
    timeoutMs: 15_000,
    message: `${path} reported ${count} time(s); reported: ${settled.join(', ')}`,
  });
}

describe.each(WATCHER_KINDS)('request watcher with the %s backend', (kind) => {
  it('reports a file created, modified in place, saved by rename and deleted', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    // One file per kind of change, each reported once by the first reconcile before it changes,
    // so a change is never counted for another.
    const [modified, saved, deleted] = ['modified.md', 'saved.md', 'deleted.md'].map((n) =>
      join(root, n),
    ) as [string, string, string];
    for (const file of [modified, saved, deleted]) await writeFile(file, 'old');
    await open(kind);
    for (const file of [modified, saved, deleted]) await reported(file);

    const created = join(root, 'created.md');
    await writeFile(created, 'new');
    await reported(created);
    await appendFile(modified, ' more');
    await reported(modified, 2);
    await writeFile(`${saved}.tmp`, 'saved');
    await rename(`${saved}.tmp`, saved);
    await reported(saved, 2);
    await unlink(deleted);
    await reported(deleted, 2);
    expect(settled.some((p) => p.endsWith('.tmp'))).toBe(false);
    expect(errors).toEqual([]);
  });

  it('reports files written right after their new directory, at any depth', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    await open(kind);
    await mkdir(join(root, 'sub'));
    await writeFile(join(root, 'sub', 'a.md'), 'a');
    await mkdir(join(root, 'sub', 'deeper', 'deepest'), { recursive: true });
    await writeFile(join(root, 'sub', 'deeper', 'deepest', 'b.md'), 'b');
    await reported(join(root, 'sub', 'a.md'));
    await reported(join(root, 'sub', 'deeper', 'deepest', 'b.md'));
    // The new directories are watched too: later changes in them are events.
    await writeFile(join(root, 'sub', 'deeper', 'deepest', 'c.md'), 'c');
    await reported(join(root, 'sub', 'deeper', 'deepest', 'c.md'));
    expect(errors).toEqual([]);
  });

  it('reports a directory tree moved in, and watches all of it', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    const outside = join(dir, 'outside');
    await mkdir(join(outside, 'tree', 'nested'), { recursive: true });
    await writeFile(join(outside, 'tree', 'nested', 'old.md'), 'x');
    await open(kind);
    await rename(join(outside, 'tree'), join(root, 'tree'));
    await reported(join(root, 'tree', 'nested', 'old.md'));
    await writeFile(join(root, 'tree', 'nested', 'new.md'), 'x');
    await reported(join(root, 'tree', 'nested', 'new.md'));
    await appendFile(join(root, 'tree', 'nested', 'old.md'), 'y');
    await reported(join(root, 'tree', 'nested', 'old.md'), 2);
    expect(errors).toEqual([]);
  });

  it('watches a subdirectory again after it is deleted and re-created', async () => {
    const root = join(dir, 'root');
    await mkdir(join(root, 'sub'), { recursive: true });
    await writeFile(join(root, 'sub', 'before.md'), 'x');
    await open(kind);
    await reported(join(root, 'sub', 'before.md'));
    await rm(join(root, 'sub'), { recursive: true });
    await mkdir(join(root, 'sub'));
    await writeFile(join(root, 'sub', 'after.md'), 'y');
    await reported(join(root, 'sub', 'after.md'));
    await appendFile(join(root, 'sub', 'after.md'), 'y');
    await reported(join(root, 'sub', 'after.md'), 2);
    expect(errors).toEqual([]);
  });

  it('reports the files of a subdirectory deleted and re-created at once, each time', async () => {
    // Synchronous calls, so the removal and the creation often reach the watch in one read: parcel
    // then merges them into one update of the directory.
    const root = join(dir, 'root');
    await mkdir(join(root, 'sub'), { recursive: true });
    await open(kind);
    for (let round = 0; round < 20; round++) {
      const file = join(root, 'sub', `round-${round}.md`);
      rmSync(join(root, 'sub'), { recursive: true });
      mkdirSync(join(root, 'sub'));
      writeFileSync(file, 'x');
      await reported(file);
    }
    expect(errors).toEqual([]);
  });

  it('watches the root again after it is deleted and re-created', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    await writeFile(join(root, 'before.md'), 'x');
    await open(kind);
    await reported(join(root, 'before.md'));
    await rm(root, { recursive: true });
    await mkdir(root);
    await writeFile(join(root, 'after.md'), 'y');
    await reported(join(root, 'after.md'));
    // Not only the reconcile that a reopened watch asks for: later changes are events again.
    await writeFile(join(root, 'later.md'), 'z');
    await reported(join(root, 'later.md'));
    await appendFile(join(root, 'later.md'), 'z');
    await reported(join(root, 'later.md'), 2);
  });

  it('watches a directory that does not exist yet once it is created', async () => {
    await open(kind);
    const root = join(dir, 'root');
    await mkdir(root);
    await writeFile(join(root, 'first.md'), 'x');
    await reported(join(root, 'first.md'));
    await writeFile(join(root, 'second.md'), 'x');
    await reported(join(root, 'second.md'));
  });

  it('watches a single file through its directory: rename saves, only that file', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    const file = join(root, 'one.md');
    await writeFile(file, 'x');
    await open(kind, [file]);
    await writeFile(join(root, 'other.md'), 'x');
    await writeFile(`${file}.tmp`, 'saved');
    await rename(`${file}.tmp`, file);
    await reported(file);
    await writeFile(`${file}.tmp`, 'saved again');
    await rename(`${file}.tmp`, file);
    await reported(file, 2);
    expect(settled.filter((p) => p !== file)).toEqual([]);
  });

  it('watches a root that is a symlink, reporting paths under the root as given', async () => {
    const real = join(dir, 'real');
    await mkdir(join(real, 'sub'), { recursive: true });
    const root = join(dir, 'root');
    await symlink(real, root);
    await open(kind);
    await writeFile(join(root, 'sub', 'a.md'), 'x');
    await reported(join(root, 'sub', 'a.md'));
    expect(settled.filter((p) => p.startsWith(real))).toEqual([]);
  });

  it('never reports node_modules, .git or lock directories, and survives symlink loops', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    await symlink('.', join(root, 'self-loop'));
    await mkdir(join(root, 'd.md'));
    await symlink(root, join(root, 'd.md', 'up'));
    for (const ignored of ['node_modules', '.git', '.x.md.engine-lock'])
      await mkdir(join(root, ignored, 'deep'), { recursive: true });
    await open(kind);
    for (const ignored of ['node_modules', '.git', '.x.md.engine-lock']) {
      await writeFile(join(root, ignored, 'a.md'), 'x');
      await writeFile(join(root, ignored, 'deep', 'b.md'), 'x');
    }
    // Written after the ignored files: once it is reported, they would have been too.
    await writeFile(join(root, 'sentinel.md'), 'x');
    await reported(join(root, 'sentinel.md'));
    expect(settled.filter((p) => /node_modules|\.git|engine-lock/.test(p))).toEqual([]);
  });
});

describe.each(WATCHER_KINDS)('the %s backend', (kind) => {
  it('reports add, change and unlink for a file', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    const events: string[] = [];
    const backend = await loadWatchBackend(kind, (message) => errors.push(new Error(message)));
    expect(backend.kind).toBe(kind);
    const subscription = await backend.subscribe(root, IGNORE_RULES, {
      onEvent: (type, path) => events.push(`${type} ${path}`),
      onError: (error) => errors.push(error),
      onStale: () => errors.push(new Error('stale')),
    });
    try {
      const file = join(root, 'a.md');
      await writeFile(file, 'x');
      await waitFor(() => events.includes(`add ${file}`), { message: `add: ${events.join(', ')}` });
      await appendFile(file, 'y');
      await waitFor(() => events.includes(`change ${file}`), {
        message: `change: ${events.join(', ')}`,
      });
      await unlink(file);
      await waitFor(() => events.includes(`unlink ${file}`), {
        message: `unlink: ${events.join(', ')}`,
      });
    } finally {
      await subscription.close();
    }
    expect(errors).toEqual([]);
  });

  it('holds the inotify watches the headroom check counts for it', async () => {
    const root = join(dir, 'root');
    for (let d = 0; d < 5; d++) {
      await mkdir(join(root, `d${d}`), { recursive: true });
      for (let f = 0; f < 40; f++) {
        await writeFile(join(root, `d${d}`, `${f}.md`), 'x');
        await writeFile(join(root, `d${d}`, `${f}.txt`), 'x');
      }
    }
    await mkdir(join(root, 'node_modules', 'pkg'), { recursive: true });
    await writeFile(join(root, 'node_modules', 'pkg', 'README.md'), 'x');
    const limitFile = join(dir, 'limit');
    await writeFile(limitFile, '1\n');
    const report = await watchHeadroom([root], { watcher: kind, limitFile });
    const counted = Number(/needs about (\d+) inotify watches/.exec(report ?? '')?.[1]);
    // 6 directories; chokidar also one per markdown file (200), none for the text files.
    expect(counted).toBe(kind === 'chokidar' ? 206 : 6);
    const before = inotifyWatches();
    await open(kind);
    expect(inotifyWatches() - before).toBe(counted);
  });
});

describe('watch headroom each interval', () => {
  it('is low with fewer than 1,024 watches free, not with plenty', async () => {
    const limitFile = join(dir, 'limit');
    await writeFile(limitFile, '100\n');
    expect(watchHeadroomLow(limitFile)).toBe(true);
    await writeFile(limitFile, '100000000\n');
    expect(watchHeadroomLow(limitFile)).toBe(false);
    expect(watchHeadroomLow(join(dir, 'none'))).toBe(false);
  });
});

describe('falling back to chokidar', () => {
  const chokidarLoader = async (): Promise<WatchBackend> => loadWatchBackend('chokidar', () => {});

  it('watches with chokidar, saying why once, when parcel cannot load', async () => {
    const messages: string[] = [];
    const backend = await loadWatchBackend(
      'parcel',
      (message) => messages.push(message),
      async (k) => {
        if (k === 'parcel') throw new Error('No prebuild or local build of @parcel/watcher found');
        return chokidarLoader();
      },
    );
    expect(backend.kind).toBe('chokidar');
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/@parcel\/watcher cannot be loaded here \(No prebuild.*chokidar/);
  });

  it('watches a tree with chokidar, saying why once, when parcel cannot subscribe to it', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    const messages: string[] = [];
    let attempts = 0;
    const failing: WatchBackend = {
      kind: 'parcel',
      subscribe: async () => {
        attempts++;
        throw new Error('inotify_add_watch failed: No space left on device');
      },
    };
    const backend = await loadWatchBackend(
      'parcel',
      (message) => messages.push(message),
      async (k) => (k === 'parcel' ? failing : chokidarLoader()),
    );
    const events: string[] = [];
    const subscription = await backend.subscribe(root, IGNORE_RULES, {
      onEvent: (type, path) => events.push(`${type} ${path}`),
      onError: (error) => errors.push(error),
      onStale: () => errors.push(new Error('stale')),
    });
    try {
      expect(attempts).toBe(2);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(
        /@parcel\/watcher cannot watch .*root \(inotify_add_watch failed: No space left on device\); watching it with chokidar/,
      );
      await writeFile(join(root, 'a.md'), 'x');
      await waitFor(() => events.includes(`add ${join(root, 'a.md')}`), {
        message: `add: ${events.join(', ')}`,
      });
    } finally {
      await subscription.close();
    }
  });

  it('loads parcel here (prebuilt binary for this platform)', async () => {
    const messages: string[] = [];
    const backend = await loadWatchBackend('parcel', (message) => messages.push(message));
    expect(backend.kind).toBe('parcel');
    expect(messages).toEqual([]);
  });
});

describe('the watch opened beside the first pass', () => {
  it("finds a write made between a file's read and its directory's watch, the index untrusted until then", async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    const file = join(root, 'N.md');
    await writeFile(file, 'before\n');
    const parcel = await loadWatchBackend('parcel', () => {});
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // A subscription that opens only when the test says: its crawl outlasts the first pass.
    const backend: WatchBackend = {
      kind: 'parcel',
      subscribe: async (d, ignore, handlers) => {
        await held;
        return parcel.subscribe(d, ignore, handlers);
      },
    };
    const w = new RequestWatcher({
      paths: [root],
      debounceMs: 50,
      rescanIntervalMs: 3_600_000,
      backend,
      onSettled: (path) => settled.push(path),
      onError: (error) => errors.push(error),
    });
    watcher = w;
    const inspected: string[] = [];
    await w.start(async (path) => {
      inspected.push(path);
      // After the first pass's stat and read of the file, before its directory is watched.
      writeFileSync(path, 'written after the read, before the watch\n');
      release();
      return false;
    });
    expect(inspected).toEqual([file]);
    // Ready, with the catch-up pass under way: answers wait for it.
    expect(w.eventsComplete).toBe(false);
    await reported(file);
    await waitFor(() => w.eventsComplete, { message: 'trusted after the catch-up pass' });
    expect(times(file)).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe('request watcher passes', () => {
  /** A root holding link.md, a symlink to a file outside it: no watch reports its writes. */
  async function linked(rescanIntervalMs: number): Promise<{ root: string; target: string }> {
    const root = join(dir, 'root');
    const target = join(dir, 'outside', 'target.md');
    await mkdir(root);
    await mkdir(join(dir, 'outside'));
    await writeFile(target, 'x\n');
    await symlink(target, join(root, 'link.md'));
    watcher = new RequestWatcher({
      paths: [root],
      debounceMs: 50,
      rescanIntervalMs,
      watcher: 'parcel',
      onSettled: (path) => settled.push(path),
      onError: (error) => errors.push(error),
    });
    await watcher.start();
    await reported(join(root, 'link.md'));
    return { root, target };
  }

  it('find a change no watch reports (a linked file written in place) at a later periodic pass', async () => {
    const { root, target } = await linked(100);
    // Every pass stats a symlink, a directory pass too (tree-state.ts).
    await appendFile(target, 'in place\n');
    await reported(join(root, 'link.md'), 2);
    expect(errors).toEqual([]);
  });

  it('run a full pass after a flood of events on any path (the kernel queue may have overflowed)', async () => {
    const { root, target } = await linked(3_600_000);
    await appendFile(target, 'in place\n');
    // Written synchronously: within a second even on a loaded machine.
    for (let i = 0; i < FLOOD_EVENTS + 100; i++) writeFileSync(join(root, `f${i}.txt`), '');
    await reported(join(root, 'link.md'), 2);
    expect(errors).toEqual([]);
  });

  it('take a flood for lost events (parcel hides an overflow) until the full pass after it', async () => {
    const { root } = await linked(3_600_000);
    const w = watcher as RequestWatcher;
    expect(w.eventsComplete).toBe(true);
    let untrusted = false;
    const sample = setInterval(() => (untrusted ||= !w.eventsComplete), 2);
    try {
      for (let i = 0; i < FLOOD_EVENTS + 100; i++) writeFileSync(join(root, `f${i}.txt`), '');
      await waitFor(() => untrusted, { message: 'the flood taken for lost events' });
      await waitFor(() => w.eventsComplete, { message: 'trusted after the full pass' });
    } finally {
      clearInterval(sample);
    }
  });

  it('take low inotify headroom for a watch not open, said once, until a full pass after it is back', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    let low = false;
    let checks = 0;
    const restored: string[] = [];
    const w = new RequestWatcher({
      paths: [root],
      debounceMs: 50,
      rescanIntervalMs: 100,
      watcher: 'parcel',
      onSettled: (path) => settled.push(path),
      onError: (error) => errors.push(error),
      onRestored: (message) => restored.push(message),
      headroomLow: () => (checks++, low),
    });
    watcher = w;
    await w.start();
    await waitFor(() => checks >= 1, { message: 'a headroom check' });
    expect(w.eventsComplete).toBe(true);
    low = true;
    await waitFor(() => !w.eventsComplete, { message: 'low headroom taken for lost events' });
    const seen = checks;
    await waitFor(() => checks >= seen + 2, { message: 'two more checks' });
    expect(w.eventsComplete).toBe(false);
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('inotify watches')]);
    low = false;
    await waitFor(() => w.eventsComplete, { message: 'trusted after the full pass' });
    expect(restored).toEqual([expect.stringContaining('inotify watches are free again')]);
  });
});
