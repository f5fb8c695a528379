/**
 * The daemon's scheduling decisions in-process, with a fake runner (nothing is started), a fake
 * clock and a fake process probe, all through its context: dispatch order and the cap, and a
 * reap that judges claims by the probe. Fast: no tmux, no agent, no waiting on time.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon/daemon.js';
import type { ProcProbe } from '../../src/process/proc-probe.js';
import type { AgentLaunch, Runner } from '../../src/runners/runner.js';
import { readPause, writePause } from '../../src/sessions/limit-pause.js';
import { readRequestFile } from '../../src/files/read-text-file.js';
import { markCancelled } from '../../src/sessions/session-markers.js';
import { claimEdit, requeueEdit } from '../../src/tags/lifecycle-edits.js';
import { craftClaim, craftedState, sessionRef } from '../helpers/crafted-state.js';
import { inProcessContext } from '../helpers/in-process-context.js';
import { waitFor } from '../helpers/wait-for.js';
import { BOOT, fakeProbe, HOST, statLine } from '../process/fake-probe.js';

let root: string;
const roots: string[] = [];
afterEach(async () => {
  for (const dir of roots.splice(0)) await rm(dir, { recursive: true, force: true });
});

const ROUTES = {
  fix: { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true },
  chores: { noun: 'chores', skill: '/chores', mode: 'agent', priority: 5, dispatchable: true },
};

/** A daemon over a fresh root; the clock stands an hour after every file was written. */
async function daemonWith(
  maxAgents: number,
  probe: ProcProbe,
  caps: Record<string, number> = {},
  onLaunch: (request: AgentLaunch) => Promise<void> = async () => undefined,
) {
  root = await mkdtemp(join(tmpdir(), 'engine-scheduling-'));
  roots.push(root);
  await mkdir(join(root, 'sessions'));
  const launched: AgentLaunch[] = [];
  const runner = {
    kind: 'tmux',
    launch: async (request: AgentLaunch) => {
      launched.push(request);
      await onLaunch(request);
      return { pid: 1, windowName: request.name, target: '%1' };
    },
    close: async () => undefined,
  } as unknown as Runner;
  const ctx = inProcessContext(root, {
    options: { debounceMs: 3000, maxAgents },
    routes: {
      route: (noun) => ROUTES[noun as keyof typeof ROUTES] ?? null,
      cap: (noun) => caps[noun],
      watch: () => undefined,
      close: async () => undefined,
    },
    runner,
    now: () => new Date(Date.now() + 3600_000),
    timers: {
      setTimeout: () => {
        throw new Error('runOnce sets no timer');
      },
      clearTimeout: () => undefined,
    },
    probe,
  });
  return { daemon: new Daemon(ctx), launched };
}

/**
 * A daemon over a fresh root that runs on real timers (start/stop), with a fake runner that only
 * records the request files it would start, and its log kept.
 */
async function runningDaemon(over: Parameters<typeof inProcessContext>[1] = {}) {
  root = await mkdtemp(join(tmpdir(), 'engine-scheduling-'));
  roots.push(root);
  await mkdir(join(root, 'sessions'));
  const launched: string[] = [];
  const lines: string[] = [];
  const daemon = new Daemon(
    inProcessContext(root, {
      log: (_level, message) => lines.push(message),
      routes: {
        route: (noun) => ROUTES[noun as keyof typeof ROUTES] ?? null,
        cap: () => undefined,
        watch: () => undefined,
        close: async () => undefined,
      },
      runner: {
        kind: 'tmux',
        launch: async (request: AgentLaunch) => {
          launched.push(request.env.ENGINE_REQUEST_FILE?.split('/').pop() ?? '');
          return { pid: 1, windowName: request.name, target: '%1' };
        },
        close: async () => undefined,
      } as unknown as Runner,
      probe: fakeProbe(),
      ...over,
    }),
  );
  return { daemon, launched, lines };
}

/**
 * `name` claimed five minutes ago by a session whose wrapper is pid 4242 (start ticks 777);
 * resolves to the request file.
 */
async function claimOfPid4242(name: string, tag: string): Promise<string> {
  const ref = sessionRef(5 * 60_000, tag);
  const file = join(root, 'sessions', name);
  const state = { pid: 4242, startTicks: '777', bootId: BOOT, host: HOST };
  return craftClaim(root, name, ref, craftedState(root, file, ref, state));
}

const request = (name: string, tags: string) =>
  writeFile(join(root, 'sessions', name), `# ${name}\n**Tags**: ${tags}\n`);
const read = (name: string) => readFile(join(root, 'sessions', name), 'utf8');

describe('the daemon, in-process with a fake runner, clock and probe', () => {
  it('claims by weight, then table priority, up to the cap, and starts nothing else', async () => {
    const { daemon, launched } = await daemonWith(2, fakeProbe());
    await request('A.md', '#delegated-fix');
    await request('B.md', '#delegated-chores #P0');
    await request('C.md', '#delegated-fix #P1');
    await request('D.md', '#delegated-fix #P0');
    await daemon.runOnce();
    await daemon.stop();
    expect(launched.map((l) => l.env.ENGINE_REQUEST_FILE?.split('/').pop())).toEqual([
      'D.md',
      'B.md',
    ]);
    expect(await read('D.md')).toContain('#claimed-fix');
    expect(await read('B.md')).toContain('#claimed-chores');
    expect(await read('A.md')).toContain('#delegated-fix');
    expect(await read('C.md')).toContain('#delegated-fix');
  });

  it('--once claims no more of a noun than its Max, and goes on with other nouns', async () => {
    const { daemon, launched } = await daemonWith(0, fakeProbe(), { fix: 1 });
    await request('A.md', '#delegated-fix #P0');
    await request('B.md', '#delegated-fix');
    await request('C.md', '#delegated-chores');
    await daemon.runOnce();
    await daemon.stop();
    expect(launched.map((l) => l.env.ENGINE_REQUEST_FILE?.split('/').pop())).toEqual([
      'A.md',
      'C.md',
    ]);
    expect(await read('B.md')).toContain('#delegated-fix');
  });

  it('judges a claim by the probe: a live agent holds its slot, a dead one is requeued', async () => {
    const alive = fakeProbe({ stats: { 4242: statLine(4242, 'sh', 'S', '777') } });
    const live = await daemonWith(1, alive);
    const ref = sessionRef(5 * 60_000, 'held');
    const state = craftedState(root, join(root, 'sessions', 'HELD.md'), ref, {
      pid: 4242,
      startTicks: '777',
      bootId: BOOT,
      host: HOST,
    });
    await craftClaim(root, 'HELD.md', ref, state);
    await request('NEXT.md', '#delegated-fix');
    await live.daemon.runOnce();
    await live.daemon.stop();
    expect(live.launched).toEqual([]);
    expect(await read('HELD.md')).toContain('#claimed-fix');

    const dead = await daemonWith(1, fakeProbe());
    await craftClaim(root, 'HELD.md', ref, {
      ...state,
      root,
      requestFile: join(root, 'sessions', 'HELD.md'),
    });
    await request('NEXT.md', '#delegated-fix');
    await dead.daemon.runOnce();
    await dead.daemon.stop();
    expect(await read('HELD.md')).toMatch(
      /#needs-fix[\s\S]*## Recovery[\s\S]*agent wrapper pid 4242/,
    );
    expect(dead.launched).toHaveLength(1);
  });

  it('claims nothing while the queue is paused, and one item, the probe, once the pause ran out', async () => {
    const { daemon, launched } = await daemonWith(0, fakeProbe());
    const now = Date.now() + 3600_000;
    await request('A.md', '#delegated-fix #P1');
    await request('B.md', '#delegated-fix #P0');
    const since = new Date(now - 60_000).toISOString();
    await writePause(root, { until: new Date(now + 60_000).toISOString(), reason: 'limit', since });
    await daemon.runOnce();
    await daemon.stop();
    expect(launched).toEqual([]);

    const later = await daemonWith(0, fakeProbe());
    await request('A.md', '#delegated-fix #P1');
    await request('B.md', '#delegated-fix #P0');
    await writePause(root, { until: new Date(now - 1000).toISOString(), reason: 'limit', since });
    await later.daemon.runOnce();
    await later.daemon.stop();
    expect(later.launched.map((l) => l.env.ENGINE_REQUEST_FILE?.split('/').pop())).toEqual([
      'B.md',
    ]);
    expect((await readPause(root))?.probe).toMatchObject({ file: join(root, 'sessions', 'B.md') });
    expect(await read('A.md')).toContain('#delegated-fix');
  });

  it("keeps a retry until its Recovery entry's Not Before, on the daemon's clock", async () => {
    const now = Date.now() + 3600_000;
    const retry = (notBefore: number) => {
      const session = 'sessions/2026_11_24_030000_FIX_x_abcd';
      const claimed = claimEdit('# R\n**Tags**: #delegated-fix\n', 'fix', session);
      return requeueEdit(claimed, 'fix', session, {
        date: new Date(now - 120_000).toISOString(),
        reason: 'agent exited with code 1',
        priorSession: `${session}/`,
        attempt: 1,
        back: 'delegated',
        notBefore: new Date(notBefore).toISOString(),
      });
    };
    const early = await daemonWith(0, fakeProbe());
    await writeFile(join(root, 'sessions', 'R.md'), retry(now + 60_000));
    await early.daemon.runOnce();
    await early.daemon.stop();
    expect(early.launched).toEqual([]);
    expect(await read('R.md')).toContain('#delegated-fix');

    const due = await daemonWith(0, fakeProbe());
    await writeFile(join(root, 'sessions', 'R.md'), retry(now - 1000));
    await due.daemon.runOnce();
    await due.daemon.stop();
    expect(due.launched).toHaveLength(1);
    expect(await read('R.md')).toContain('#claimed-fix');
  });

  it('holds an item after a request it depends on, checked again right before its claim', async () => {
    const names = (launched: AgentLaunch[]) =>
      launched.map((l) => l.env.ENGINE_REQUEST_FILE?.split('/').pop());
    const dependent = '# C\n**Tags**: #delegated-fix\n**Depends On**: sessions/P.md\n';
    const held = await daemonWith(0, fakeProbe());
    await request('P.md', '#needs-fix');
    await writeFile(join(root, 'sessions', 'C.md'), dependent);
    await held.daemon.runOnce();
    await held.daemon.stop();
    expect(held.launched).toEqual([]);

    // Free when read (P done); P goes back to work while A, first in order, is launched.
    const reopened = await daemonWith(0, fakeProbe(), {}, async (launch) => {
      if (launch.env.ENGINE_REQUEST_FILE?.endsWith('A.md'))
        await request('P.md', '#delegated-chores');
    });
    await request('P.md', '#done-fix');
    await request('A.md', '#delegated-fix #P0');
    await writeFile(join(root, 'sessions', 'C.md'), dependent);
    await reopened.daemon.runOnce();
    await reopened.daemon.stop();
    expect(names(reopened.launched)).toEqual(['A.md']);
    expect(await read('C.md')).toContain('#delegated-fix');
  });

  it('a running daemon claims a held item once the request it depends on is done', async () => {
    const { daemon, launched, lines } = await runningDaemon({
      // No watch: a reconcile pass every 100 ms finds the parent's change.
      options: { debounceMs: 0, rescanIntervalMs: 100, pollMs: 60_000, reapIntervalMs: 60_000 },
    });
    try {
      await request('P.md', '#claimed-fix');
      await writeFile(
        join(root, 'sessions', 'C.md'),
        '# C\n**Tags**: #delegated-chores\n**Depends On**: sessions/P.md\n',
      );
      await daemon.start();
      await waitFor(
        () => lines.some((l) => /C\.md #delegated-chores: after sessions\/P\.md/.test(l)),
        {
          message: `C.md held; ${lines.join('\n')}`,
        },
      );
      expect(launched).toEqual([]);
      await request('P.md', '#done-fix');
      await waitFor(() => launched.length === 1, { message: 'C.md claimed' });
      expect(launched).toEqual(['C.md']);
    } finally {
      await daemon.stop();
    }
  });

  it('reads a held item again at each reap: a dependency outside the watched paths changes unseen', async () => {
    const { daemon, launched, lines } = await runningDaemon({
      options: { debounceMs: 0, rescanIntervalMs: 60_000, pollMs: 60_000, reapIntervalMs: 100 },
    });
    await mkdir(join(root, 'docs'));
    const plan = join(root, 'docs', 'PLAN.md');
    try {
      await writeFile(plan, '# Plan\n**Tags**: #claimed-fix\n');
      await writeFile(
        join(root, 'sessions', 'C.md'),
        '# C\n**Tags**: #delegated-chores\n**Depends On**: docs/PLAN.md\n',
      );
      await daemon.start();
      await waitFor(
        () => lines.some((l) => /C\.md #delegated-chores: after docs\/PLAN\.md/.test(l)),
        {
          message: `C.md held; ${lines.join('\n')}`,
        },
      );
      // docs/ is not watched: no event, no reconcile pass sees this.
      await writeFile(plan, '# Plan\n**Tags**: #done-fix\n');
      await waitFor(() => launched.length === 1, { message: `C.md claimed; ${lines.join('\n')}` });
      expect(launched).toEqual(['C.md']);
    } finally {
      await daemon.stop();
    }
  });

  it('claims an item whose settle came a moment early, before admission opened', async () => {
    // A timer fires up to a millisecond before its time by Date.now(), so the settled read of a
    // file found not yet quiet at start may find it not quiet still. Here the clock lags until
    // start resolves, and the first reap (a dead claim's requeue) waits for that read, so it
    // comes while admission is shut.
    let lag = 60_000;
    let readsOfA = 0;
    const { daemon, launched, lines } = await runningDaemon({
      options: { debounceMs: 0, rescanIntervalMs: 60_000, pollMs: 60_000, reapIntervalMs: 60_000 },
      now: () => new Date(Date.now() - lag),
      readRequest: ((...args: Parameters<typeof readRequestFile>) => {
        if (args[0].endsWith('A.md')) readsOfA++;
        return readRequestFile(...args);
      }) as typeof readRequestFile,
      // The first pass's read, then the settled one (parked again, synchronously after it).
      recordEvent: async (event) => {
        if (event.event === 'requeued')
          await waitFor(() => readsOfA >= 2, { message: 'A.md read again' });
      },
    });
    try {
      // No process 4242 under the fake probe: the claim is dead, and the first reap requeues it.
      await claimOfPid4242('DEAD.md', 'dead');
      await request('A.md', '#delegated-fix');
      await daemon.start();
      lag = 0;
      await waitFor(() => launched.includes('A.md'), {
        timeoutMs: 3000,
        message: () => `A.md claimed; ${lines.join('\n')}`,
      });
    } finally {
      await daemon.stop();
    }
  });

  it('waits for a Not Before beyond the longest timer without spinning', async () => {
    const { daemon } = await runningDaemon({
      options: {
        debounceMs: 0,
        rescanIntervalMs: 60_000,
        pollMs: 60_000,
        reapIntervalMs: 60_000,
      },
      timers: {
        setTimeout: (callback, ms) => {
          delays.push(ms);
          return setTimeout(callback, Math.min(ms, 60_000));
        },
        clearTimeout,
      },
    });
    const delays: number[] = [];
    const session = 'sessions/2026_01_01_000000_FIX_r_0001';
    const farAway = new Date(Date.now() + 100 * 24 * 3600_000).toISOString();
    const claimed = claimEdit('# R\n**Tags**: #delegated-fix\n', 'fix', session);
    const text = requeueEdit(claimed, 'fix', session, {
      date: new Date().toISOString(),
      reason: 'agent exited with code 1',
      priorSession: `${session}/`,
      attempt: 1,
      back: 'delegated',
      failure: 'agent',
      notBefore: farAway,
    });
    await writeFile(join(root, 'sessions', 'R.md'), text);
    try {
      await daemon.start();
      await waitFor(() => delays.some((ms) => ms > 60_000), { message: `${delays.join(' ')}` });
      // Node runs a timer longer than 2^31-1 ms at once: the far Not Before is looked at again then.
      expect(Math.max(...delays)).toBeLessThanOrEqual(2 ** 31 - 1);
    } finally {
      await daemon.stop();
    }
  });

  it('judges a waiting item again under a reloaded table: a row taken away is not launched', async () => {
    const { daemon, launched, lines } = await runningDaemon({
      options: {
        debounceMs: 0,
        maxAgents: 1,
        rescanIntervalMs: 60_000,
        pollMs: 50,
        reapIntervalMs: 60_000,
      },
      routes: {
        route: (noun) => (noun === 'chores' ? choresRoute : ROUTES.fix),
        cap: () => undefined,
        watch: (onReload) => void (reload = onReload),
        close: async () => undefined,
      },
      probe: fakeProbe({ stats: { 4242: statLine(4242, 'sh', 'S', '777') } }),
    });
    let reload: (files: string[]) => void = () => undefined;
    let choresRoute: (typeof ROUTES)['chores'] | null = ROUTES.chores;
    const held = await claimOfPid4242('HELD.md', 'held');
    await request('NEXT.md', '#delegated-chores');
    const seen = (pattern: RegExp) => lines.some((l) => pattern.test(l));
    try {
      await daemon.start();
      await waitFor(() => seen(/NEXT\.md #chores: .*→ waiting-slot/), {
        message: `NEXT.md waits for the slot; ${lines.join('\n')}`,
      });
      // The human takes the chores row away while NEXT.md waits; then the slot frees.
      choresRoute = null;
      reload([]);
      await writeFile(held, (await read('HELD.md')).replace('#claimed-fix', '#done-fix'));
      await waitFor(
        () =>
          launched.length > 0 ||
          (seen(/HELD\.md #fix: .*its claim ended/) &&
            seen(/NEXT\.md #chores: .*→ not-dispatchable/)),
        {
          message: `the slot freed; ${lines.join('\n')}`,
        },
      );
      expect(launched).toEqual([]);
    } finally {
      await daemon.stop();
    }
  });

  it('reads a file again when its launch failed after the claim: the claim is judged, never left', async () => {
    const { daemon, lines } = await runningDaemon({
      options: {
        debounceMs: 0,
        claimGraceMs: 0,
        rescanIntervalMs: 60_000,
        pollMs: 60_000,
        reapIntervalMs: 100,
      },
      // Something fails right after the claim was written (here: recording it).
      recordEvent: async (event) => {
        if (event.event === 'claimed') throw new Error('disk full');
      },
      runner: { kind: 'tmux', close: async () => undefined } as unknown as Runner,
    });
    await request('R.md', '#delegated-fix');
    try {
      await daemon.start();
      await waitFor(async () => (await read('R.md')).includes('#needs-fix'), {
        message: () => `R.md requeued; ${lines.join('\n')}`,
      });
      expect(await read('R.md')).toMatch(/## Recovery/);
    } finally {
      await daemon.stop();
    }
  });

  it('never restores the claim of a cancelled session over a stale save: the approval is a new one', async () => {
    const alive = fakeProbe({ stats: { 4242: statLine(4242, 'sh', 'S', '777') } });
    const { daemon, launched } = await daemonWith(1, alive);
    const ref = sessionRef(5 * 60_000, 'cancelled');
    const file = join(root, 'sessions', 'R.md');
    const state = craftedState(root, file, ref, {
      pid: 4242,
      startTicks: '777',
      bootId: BOOT,
      host: HOST,
    });
    await craftClaim(root, 'R.md', ref, state);
    // engine cancel marked it, and its agent is still ending when an editor saves its old copy.
    await markCancelled(join(root, ref));
    await request('R.md', '#delegated-fix');
    await daemon.runOnce();
    await daemon.stop();
    expect(launched).toHaveLength(1);
    expect(await read('R.md')).not.toContain(ref);
  });
});
