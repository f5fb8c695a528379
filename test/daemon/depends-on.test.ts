/**
 * `**Depends On**:` through the real daemon (docs/DAEMON.md, "Dependencies"): a child held while
 * its parent runs, after the parent failed, and until it is retried and done; a cycle, held and
 * warned once; a restart while an item is held; a glob that holds until every match is done, and
 * a path that names no file. `engine status --json` says what holds each. (The check made again
 * at claim time is test/daemon/scheduling.test.ts's.)
 */
import { describe, expect, it } from 'vitest';
import type { Blocker } from '../../src/dispatch/depends-on.js';
import {
  events,
  release,
  useDaemonHarness,
  waitForReady,
  waitForTag,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

/** What `engine status --json` says holds the waiting item of file `name`, or null. */
async function heldBy(name: string): Promise<Blocker[] | null> {
  const status = await runCli(['status', '--json', '--root', h.root]);
  expect(status.code, status.stderr).toBe(0);
  const { waiting } = JSON.parse(status.stdout) as {
    waiting: Array<{ file: string; wait: { kind: string; by?: Blocker[] } | null }>;
  };
  const wait = waiting.find((w) => w.file.endsWith(`/${name}`))?.wait;
  return wait?.kind === 'blocked' ? (wait.by ?? null) : null;
}

/** The files claimed, one entry per `claimed` event, by name. */
const claims = (): string[] =>
  events(h.root)
    .filter((e) => e.event === 'claimed')
    .map((e) => e.file?.split('/').pop() ?? '');

/** Waits for the daemon's line saying it holds `name`'s item for `why` (a part of the line). */
const heldLine = (d: DaemonProcess, name: string, why: string) =>
  waitFor(
    () =>
      d
        .output()
        .split('\n')
        .find((l) => l.includes(`${name} #delegated-`) && l.includes(why)),
    {
      message: () => `the daemon holding ${name} (${why}); output:\n${d.output()}`,
    },
  );

describe('Depends On, through the daemon', () => {
  it('holds a child while its parent runs, after it failed, and until it is retried and done', async () => {
    const d = h.start(['--retries', '0'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const parent = await h.request('P.md', '# P\n**Tags**: #delegated-fix\n');
    const child = await h.request(
      'C.md',
      '# C\n**Tags**: #delegated-chores\n**Depends On**: sessions/P.md\n',
    );
    const [first] = await h.waitForAgents(1);
    expect(first!.file).toBe(parent);
    await heldLine(d, 'C.md', 'after sessions/P.md (#claimed-fix)');
    expect(await heldBy('C.md')).toEqual([
      {
        kind: 'pending',
        pattern: 'sessions/P.md',
        file: 'sessions/P.md',
        states: ['#claimed-fix'],
      },
    ]);

    // The parent's agent fails: with --retries 0 its item goes back to #needs-fix for a human.
    process.kill(first!.pid, 'SIGKILL');
    const failed = await waitForTag(parent, ['#needs-fix']);
    expect(failed).toContain('## Recovery');
    await heldLine(d, 'C.md', 'after sessions/P.md, which failed');
    expect(await heldBy('C.md')).toEqual([
      expect.objectContaining({ kind: 'failed', file: 'sessions/P.md', states: ['#needs-fix'] }),
    ]);
    expect(claims()).toEqual(['P.md']);

    // Retried, it runs again, and its child still waits until it is done.
    const retried = await runCli(['retry', parent, '--root', h.root]);
    expect(retried.code, retried.stderr).toBe(0);
    const second = (await h.waitForAgents(2))[1]!;
    expect(second.file).toBe(parent);
    expect(await heldBy('C.md')).toEqual([
      expect.objectContaining({ kind: 'pending', states: ['#claimed-fix'] }),
    ]);
    expect(claims()).toEqual(['P.md', 'P.md']);
    await release(second.session);
    const third = (await h.waitForAgents(3))[2]!;
    expect(third.file).toBe(child);
    expect(claims()).toEqual(['P.md', 'P.md', 'C.md']);
    await release(third.session);
    await waitForTag(child, ['#done-chores']);
  });

  it('holds both items of a cycle, names its files in status, and warns of it once', async () => {
    // Both written before the start: A read before B exists would be held as naming no file.
    await h.request('A.md', '# A\n**Tags**: #delegated-fix\n**Depends On**: sessions/B.md\n');
    await h.request('B.md', '# B\n**Tags**: #delegated-fix\n**Depends On**: sessions/A.md\n');
    const d = h.start();
    await waitForReady(d);
    const cycleWarnings = () =>
      d
        .output()
        .split('\n')
        .filter((l) => / WARN .*a cycle: /.test(l));
    await waitFor(() => cycleWarnings().length > 0, {
      message: () => `a warning of the cycle; output:\n${d.output()}`,
    });
    expect(cycleWarnings()[0]).toMatch(
      /held \S+\/(A|B)\.md #delegated-fix: a cycle: sessions\/(A|B)\.md → sessions\/(B|A)\.md → sessions\/\1\.md, none can start; it waits until its Depends On line/,
    );
    await heldLine(d, 'A.md', 'a cycle: sessions/A.md → sessions/B.md → sessions/A.md');
    await heldLine(d, 'B.md', 'a cycle: sessions/B.md → sessions/A.md → sessions/B.md');
    expect(await heldBy('A.md')).toEqual([
      { kind: 'cycle', pattern: 'sessions/B.md', cycle: ['sessions/A.md', 'sessions/B.md'] },
    ]);
    expect(await heldBy('B.md')).toEqual([
      { kind: 'cycle', pattern: 'sessions/A.md', cycle: ['sessions/B.md', 'sessions/A.md'] },
    ]);
    const text = await runCli(['status', '--root', h.root]);
    expect(text.stdout).toMatch(/a cycle: sessions\/A\.md →\s+sessions\/B\.md →\s+sessions\/A\.md/);

    // Judged again (another request runs, A gains a dependency): still held, no second warning.
    const other = await h.request('F.md', '# F\n**Tags**: #delegated-fix\n');
    await waitForTag(other, ['#done-fix']);
    await h.request('Q.md', '# Q\n**Tags**: #needs-chores\n');
    await h.request(
      'A.md',
      '# A\n**Tags**: #delegated-fix\n**Depends On**: sessions/B.md, sessions/Q.md\n',
    );
    await heldLine(d, 'A.md', 'after sessions/Q.md, which waits for approval');
    expect(cycleWarnings()).toHaveLength(1);
    expect(claims()).toEqual(['F.md']);
  });

  it('claims a held item once after a restart, its parent done while no daemon ran', async () => {
    const first = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(first);
    const parent = await h.request('P.md', '# P\n**Tags**: #delegated-fix\n');
    const child = await h.request(
      'C.md',
      '# C\n**Tags**: #delegated-chores\n**Depends On**: sessions/P.md\n',
    );
    const [agent] = await h.waitForAgents(1);
    await heldLine(first, 'C.md', 'after sessions/P.md (#claimed-fix)');
    expect(await first.stop()).toBe(0);

    // The parent's agent, left running, marks it done (`engine tag swap`) with no daemon running.
    await release(agent!.session);
    await waitForTag(parent, ['#done-fix']);
    const second = h.start();
    await waitForReady(second);
    await waitForTag(child, ['#done-chores'], 30_000);
    expect(await second.stop()).toBe(0);
    expect(claims()).toEqual(['P.md', 'C.md']);
    expect(h.agents().map((a) => a.file)).toEqual([parent, child]);
  });

  it('holds an item until every file its glob matches is done, and one whose path names no file', async () => {
    await h.request('batch-1.md', '# 1\n**Tags**: #done-fix\n');
    const batch2 = await h.request('batch-2.md', '# 2\n**Tags**: #needs-fix\n');
    const glob = await h.request(
      'C.md',
      '# C\n**Tags**: #delegated-chores\n**Depends On**: sessions/batch-*.md\n',
    );
    await h.request(
      'D.md',
      '# D\n**Tags**: #delegated-chores\n**Depends On**: sessions/missing.md\n',
    );
    const d = h.start();
    await waitForReady(d);
    await heldLine(d, 'C.md', 'after sessions/batch-2.md, which waits for approval');
    await heldLine(d, 'D.md', 'Depends On sessions/missing.md names no file');
    expect(await heldBy('C.md')).toEqual([
      {
        kind: 'needs',
        pattern: 'sessions/batch-*.md',
        file: 'sessions/batch-2.md',
        states: ['#needs-fix'],
      },
    ]);
    const missing = [{ kind: 'missing', pattern: 'sessions/missing.md' }];
    expect(await heldBy('D.md')).toEqual(missing);

    // The last match approved: it runs, then the item after the glob does; D stays held.
    const approved = await runCli(['tag', 'swap', batch2, '#needs-fix', '#delegated-fix']);
    expect(approved.code, approved.stderr).toBe(0);
    await waitForTag(glob, ['#done-chores'], 30_000);
    expect(claims()).toEqual(['batch-2.md', 'C.md']);
    expect(await heldBy('D.md')).toEqual(missing);
    expect(await d.stop()).toBe(0);
    expect(claims()).toEqual(['batch-2.md', 'C.md']);
  });
});
