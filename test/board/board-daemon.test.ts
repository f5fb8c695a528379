/**
 * The board's report from a running daemon (board/daemon-source.ts), against real daemons: from
 * the daemon while one runs (no file read by the board), from the files once it stops, from the
 * daemon again once one starts; a change within a second either way; the transcript tail of a
 * running agent on its card (board/transcript-tails.ts).
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileBoardSource } from '../../src/board/board-source.js';
import type { Board } from '../../src/board/board-view.js';
import { daemonBoardSource, type DaemonBoardSource } from '../../src/board/daemon-source.js';
import { TranscriptTails } from '../../src/board/transcript-tails.js';
import { readDispatchTable } from '../../src/cli/paths.js';
import { connectDaemon } from '../../src/control/control-client.js';
import { parseDispatchTable } from '../../src/dispatch/dispatch-table.js';
import { judgeOptionsOf, loadSettings } from '../../src/settings/load-settings.js';
import { collectStatus } from '../../src/status/collect-status.js';
import { useDaemonHarness, waitForReady, type DaemonHarness } from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const URL_LINE = /^Board: (http:\/\/127\.0\.0\.1:\d+\/#token=([\w-]+))$/m;

/** The board's source over `h`'s root, as start-board.ts makes it; `reads` counts file reports. */
async function sourceOf(
  h: DaemonHarness,
  paths = [h.sessions],
): Promise<{ source: DaemonBoardSource; reads: () => number }> {
  const { settings } = await loadSettings(h.root, {}, process.env);
  const judging = {
    options: judgeOptionsOf(settings),
    debounceMs: settings.debounceMs,
    maxAgents: settings.maxAgents,
    agingMs: settings.agingMs,
  };
  let reads = 0;
  const files = await fileBoardSource({
    root: h.root,
    paths,
    watcher: 'parcel',
    onError: () => undefined,
    collect: async () => {
      reads += 1;
      const used = await readDispatchTable(h.root);
      return collectStatus(h.root, paths, parseDispatchTable(used.text, used.path), judging);
    },
  });
  const source = daemonBoardSource({
    files,
    connect: () => connectDaemon(h.root, { timeoutMs: 10_000 }),
    query: async () => {
      const used = await readDispatchTable(h.root);
      return {
        paths,
        table: { text: used.text, path: used.path },
        judging: { ...judging, nowMs: Date.now() },
      };
    },
  });
  return { source, reads: () => reads };
}

describe('the board from the daemon', () => {
  const h = useDaemonHarness();

  it('answers from the daemon while one runs, from the files once it stops, and from a daemon started again', async () => {
    await h.request('login.md', '# Login\n**Tags**: #needs-fix\n');
    const first = h.start();
    await waitForReady(first);
    const { source, reads } = await sourceOf(h);
    try {
      await waitFor(async () => (await source.report()).from === 'daemon', {
        message: () => `a report from the daemon; output: ${first.output()}`,
      });
      const before = reads();
      const answer = await source.report();
      expect(answer.from).toBe('daemon');
      expect(answer.report.needsYou.map((n) => n.file)).toEqual([h.file('login.md')]);
      // The daemon answered: the board read no file for it.
      expect(reads()).toBe(before);

      expect(await first.stop()).toBe(0);
      const fromFiles = await source.report();
      expect(fromFiles.from).toBe('files');
      expect(fromFiles.report.needsYou.map((n) => n.file)).toEqual([h.file('login.md')]);
      expect(reads()).toBe(before + 1);

      const again = h.start();
      await waitForReady(again);
      // Found again with no help: the board's watch sees the lock, or the next retry comes.
      await waitFor(async () => (await source.report()).from === 'daemon', {
        timeoutMs: 10_000,
        message: () => `the daemon started again; output: ${again.output()}`,
      });
      expect(await again.stop()).toBe(0);
    } finally {
      await source.close();
    }
  });

  it('says "changed" within a second when an agent starts waiting for input outside the daemon paths', async () => {
    // The daemon watches sessions/requests/ only: its change stream does not cover the session.
    const requests = h.file('requests');
    await mkdir(requests);
    const session = h.file('2026_11_26_090000_FIX_login_0001');
    await mkdir(session);
    const d = h.start([requests]);
    await waitForReady(d);
    const { source } = await sourceOf(h, [requests]);
    try {
      let changes = 0;
      source.subscribe(() => (changes += 1));
      await waitFor(async () => (await source.report()).from === 'daemon');
      // The word that the daemon answers now comes first.
      await waitFor(() => changes > 0);
      const before = changes;
      const wrote = Date.now();
      await writeFile(join(session, 'agent-state.json'), '{"state":"waiting"}\n');
      await waitFor(() => changes > before, { timeoutMs: 5000 });
      expect(Date.now() - wrote).toBeLessThan(1000);
    } finally {
      await source.close();
      expect(await d.stop()).toBe(0);
    }
  });

  it('engine run --board shows the tail of a running agent on its card, from the daemon', async () => {
    await h.request('fix.md', '# Fix\n**Tags**: #delegated-fix\n');
    const d = h.start(['--board', '--board-port', '0'], {
      TEST_AGENT_MODE: 'hold',
      TEST_AGENT_PRINT: 'tail line from the test agent',
    });
    await waitForReady(d);
    await h.waitForAgents(1);
    const [, url, token] = await waitFor(() => URL_LINE.exec(d.output()));
    let shown: Board | undefined;
    await waitFor(
      async () => {
        const res = await fetch(new URL('/api/board', url), {
          headers: { Authorization: `Bearer ${token}` },
        });
        shown = (await res.json()) as Board;
        const running = shown.lanes.find((l) => l.name === 'running')?.cards[0];
        return (
          shown.source === 'from the daemon' &&
          running?.tail?.includes('tail line from the test agent') === true
        );
      },
      {
        timeoutMs: 15_000,
        message: () => `the tail from the daemon; shown: ${JSON.stringify(shown)}`,
      },
    );
    expect(await d.stop()).toBe(0);
  });
});

describe('transcript tails', () => {
  const h = useDaemonHarness();

  it('renders an unchanged agent.log once, a changed one again, and a slow render off the fetch', async () => {
    const dir = h.file('2026_11_26_090000_FIX_login_0001');
    await mkdir(dir);
    const log = join(dir, 'agent.log');
    let renders = 0;
    let late = 0;
    let slow = false;
    const tails = new TranscriptTails({
      render: async () => {
        renders += 1;
        if (slow) await new Promise((resolve) => setTimeout(resolve, 500));
        return [`render ${renders}`];
      },
      onLate: () => (late += 1),
      budgetMs: 100,
      minIntervalMs: 0,
    });
    expect(await tails.tail(dir)).toBeNull();
    await writeFile(log, 'one\n');
    expect(await tails.tail(dir)).toBe('render 1');
    expect(await tails.tail(dir)).toBe('render 1');
    expect(renders).toBe(1);
    await appendFile(log, 'two\n');
    expect(await tails.tail(dir)).toBe('render 2');
    slow = true;
    await appendFile(log, 'three\n');
    const asked = Date.now();
    // The render outlasts the budget: the tail it had, at once; the board is told when done.
    expect(await tails.tail(dir)).toBe('render 2');
    expect(Date.now() - asked).toBeLessThan(400);
    await waitFor(() => late === 1, { timeoutMs: 5000 });
    expect(await tails.tail(dir)).toBe('render 3');
    expect(renders).toBe(3);
  });

  it('tells the board to fetch again at the end of the interval a change came within', async () => {
    const dir = h.file('2026_11_26_090000_FIX_login_0002');
    await mkdir(dir);
    const log = join(dir, 'agent.log');
    let renders = 0;
    let late = 0;
    const tails = new TranscriptTails({
      render: () => Promise.resolve([`render ${++renders}`]),
      onLate: () => (late += 1),
      minIntervalMs: 500,
    });
    await writeFile(log, 'one\n');
    expect(await tails.tail(dir)).toBe('render 1');
    await appendFile(log, 'two\n');
    // Within the interval: the tail it had, and no render until the interval's end.
    expect(await tails.tail(dir)).toBe('render 1');
    await waitFor(() => late > 0, { timeoutMs: 5000, message: 'the late fetch' });
    expect(await tails.tail(dir)).toBe('render 2');
  });
});
