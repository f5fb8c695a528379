/**
 * The daemon makes an answer while its sync with the watch runs (the watch reports the sync
 * file 50 ms or more after it is made), and keeps it only if no read changed the index meanwhile. Real
 * files, the real watch (@parcel/watcher), index, control socket and client; the sync is the
 * real one, held longer or preceded by a write.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectDaemon } from '../../src/control/control-client.js';
import { ControlServer } from '../../src/control/control-server.js';
import { StatusCache } from '../../src/control/status-cache.js';
import { IndexSync } from '../../src/index/index-sync.js';
import { TagIndex, type IndexedOccurrence } from '../../src/index/tag-index.js';
import { ScanPool } from '../../src/tags/scan-pool.js';
import type { TagPlace } from '../../src/tags/scan-tags.js';
import { RequestWatcher } from '../../src/watch/request-watcher.js';
import { waitFor } from '../helpers/wait-for.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Each time the index was asked for its tagged files (an answer being made). */
class TimedIndex extends TagIndex {
  readonly asked: number[] = [];

  override taggedUnder(
    path: string,
    keep: (tag: string, place: TagPlace) => boolean,
  ): Array<[string, IndexedOccurrence[]]> {
    this.asked.push(performance.now());
    return super.taggedUnder(path, keep);
  }
}

/** The real sync, with `before` run first and `holdMs` more once the watch has reported it. */
class HeldSync extends IndexSync {
  readonly ended: number[] = [];

  constructor(
    private readonly holdMs: number,
    private readonly before: () => Promise<void> = async () => undefined,
  ) {
    super();
  }

  override async sync(root: string, timeoutMs: number): Promise<boolean> {
    await this.before();
    const seen = await super.sync(root, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, this.holdMs));
    this.ended.push(performance.now());
    return seen;
  }
}

/** A root with sessions/ watched, indexed and served on its control socket. */
async function serve(
  sync: HeldSync,
): Promise<{ sessions: string; index: TimedIndex; find: () => Promise<string[]> }> {
  const root = await mkdtemp(join(tmpdir(), 'engine-sync-answer-'));
  const sessions = join(root, 'sessions');
  // Where the daemon keeps its state, the control socket's directory among it.
  await mkdir(join(sessions, '.engine'), { recursive: true });
  await writeFile(join(sessions, 'a.md'), '# A\n\n**Tags**: #needs-a\n');
  const pool = new ScanPool();
  let server: ControlServer | null = null;
  const cache = new StatusCache(() => true);
  const watcher: RequestWatcher = new RequestWatcher({
    paths: [sessions],
    debounceMs: 60_000,
    rescanIntervalMs: 60_000,
    onSettled: () => undefined,
    onError: () => undefined,
    onEvent: (path) => {
      if (sync.observe(path)) return;
      index.mark(path);
      cache.forget(path);
      server?.changed();
    },
  });
  const index = new TimedIndex(
    [sessions],
    (text) => pool.scan(text),
    () => watcher.eventsComplete,
    () => server?.indexChanged(),
  );
  cleanups.push(async () => {
    await server?.close();
    await watcher.close();
    await pool.close();
    await rm(root, { recursive: true, force: true });
  });
  await watcher.start();
  await waitFor(() => watcher.eventsComplete, { message: 'the catch-up pass after start' });
  await index.build();
  server = await ControlServer.start({
    root,
    index,
    sync,
    cache,
    pool,
    scan: (text) => pool.scan(text),
    log: () => undefined,
    render: () => '',
  });
  const find = async (): Promise<string[]> => {
    const client = await connectDaemon(root);
    if (!client) throw new Error('no daemon answered');
    try {
      const paths = [{ given: 'sessions', absolute: sessions }];
      const answer = await client.find({ pattern: '#needs-a', tagsOnly: false, paths });
      if (!answer) throw new Error('the daemon did not answer');
      return answer.matches.map((m) => m.path);
    } finally {
      client.close();
    }
  };
  return { sessions, index, find };
}

describe('an answer made while the sync with the watch runs', () => {
  it('is made before the sync ends, and kept when nothing changed', async () => {
    const sync = new HeldSync(300);
    const { index, find } = await serve(sync);
    expect(await find()).toEqual(['sessions/a.md']);
    expect(index.asked).toHaveLength(1);
    expect(sync.ended).toHaveLength(1);
    expect(index.asked[0]).toBeLessThan(sync.ended[0] as number);
  });

  it('is made again when a write made before the ask is reported during the sync', async () => {
    let sessions = '';
    let writes = 0;
    // The write lands before the sync file, as a write just before the ask that the watch has
    // not reported yet: the first answer misses it, the sync brings its event.
    const sync = new HeldSync(0, async () => {
      await writeFile(join(sessions, `new-${++writes}.md`), '# New\n\n**Tags**: #needs-a\n');
    });
    const served = await serve(sync);
    sessions = served.sessions;
    expect(await served.find()).toEqual(['sessions/a.md', 'sessions/new-1.md']);
    expect(served.index.asked).toHaveLength(2);
  });

  it('is kept when what the sync brings changes nothing the index holds', async () => {
    let sessions = '';
    let writes = 0;
    // A log beside the requests and a request without tags: events, but nothing to answer.
    const sync = new HeldSync(0, async () => {
      await writeFile(join(sessions, 'agent.log'), `line ${++writes}\n`, { flag: 'a' });
      await writeFile(join(sessions, `plain-${writes}.md`), '# Plain\n\nno tag here\n');
    });
    const served = await serve(sync);
    sessions = served.sessions;
    expect(await served.find()).toEqual(['sessions/a.md']);
    expect(served.index.asked).toHaveLength(1);
  });
});
