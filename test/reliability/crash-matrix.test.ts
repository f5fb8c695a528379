/**
 * Crash matrix: kill -9 the daemon at each step of a dispatch (ENGINE_FAILPOINT), the agent
 * wrapper at each of its steps, and the agent, wrapper or daemon from outside while the agent
 * works; restart what died, and check that the item ends claimed once per attempt and done
 * exactly once. A claim that lost its agent goes back to #needs-fix with one ## Recovery entry
 * (never stuck #claimed, never lost); the test then re-approves it, as a human would, and checks
 * that it completes exactly once. Figure: duplicates and lost items over the matrix (both 0).
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DaemonHarness,
  events,
  isAlive,
  killTmuxServer,
  recoveries,
  release,
  tagsOf,
  waitForState,
  waitForTag,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { countBy, FAST, recordFigure, scale } from './support.js';

const DAEMON_STEPS = [
  'after-read',
  'after-claim',
  'after-session-dir',
  'after-state',
  'after-spawn',
] as const;
const WRAPPER_STEPS = ['wrapper-after-start', 'wrapper-before-exit-record'] as const;

type Mode = 'done' | 'hold';
interface Case {
  name: string;
  mode: Mode;
  /** The daemon (or wrapper) kills itself at this step. */
  failpoint?: string;
  /** Or a fault from outside, once the agent runs (mode hold). */
  fault?: 'kill-daemon' | 'kill-agent' | 'kill-wrapper' | 'kill-wrapper-and-agent';
}

const CASES: Case[] = [
  ...DAEMON_STEPS.map((step) => ({
    name: `daemon ${step}`,
    mode: 'done' as const,
    failpoint: step,
  })),
  ...WRAPPER_STEPS.map((step) => ({ name: step, mode: 'done' as const, failpoint: step })),
  { name: 'daemon kill -9 while the agent works', mode: 'hold', fault: 'kill-daemon' },
  { name: 'agent kill -9', mode: 'hold', fault: 'kill-agent' },
  { name: 'wrapper kill -9', mode: 'hold', fault: 'kill-wrapper' },
  { name: 'wrapper and agent kill -9', mode: 'hold', fault: 'kill-wrapper-and-agent' },
];

const ROUNDS = scale(1, 5);
const HUMAN = 'A line the human wrote.';
const totals = { cases: 0, duplicates: 0, lost: 0, requeued: 0 };

interface Outcome {
  duplicates: number;
  lost: number;
  requeued: boolean;
}

async function runCase(c: Case): Promise<Outcome> {
  const s = await DaemonHarness.open(FAST);
  try {
    const file = s.file('REQ.md');
    await writeFile(file, `# R\n**Tags**: #delegated-fix\n\n${HUMAN}\n`);
    const env: Record<string, string> = { TEST_AGENT_MODE: c.mode };
    if (c.failpoint) env.ENGINE_FAILPOINT = c.failpoint;
    let daemon: DaemonProcess = s.start([], env);
    /** A daemon without the failpoint in its (or its tmux server's) environment. */
    const restartClean = async () => {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) await daemon.stop();
      killTmuxServer(s.socket);
      daemon = s.start([], { TEST_AGENT_MODE: c.mode });
    };

    if (c.failpoint && (DAEMON_STEPS as readonly string[]).includes(c.failpoint)) {
      await daemon.exited;
      expect(daemon.child.signalCode, daemon.output()).toBe('SIGKILL');
      daemon = s.start([], { TEST_AGENT_MODE: c.mode });
    }
    if (c.fault) {
      const [agent] = await waitFor(() => s.agents().length === 1 && s.agents(), {
        timeoutMs: 60_000,
        message: `the agent to start; ${daemon.output().slice(-3000)}`,
      });
      const state = await waitForState(agent!.session, (st) => st.pid && st.agentPid);
      if (c.fault === 'kill-daemon') {
        await daemon.kill9();
        daemon = s.start([], { TEST_AGENT_MODE: c.mode });
        await waitFor(() => daemon.output().includes('adopted running agent'), {
          message: `adoption; ${daemon.output()}`,
        });
        await release(agent!.session);
      } else {
        if (c.fault !== 'kill-agent') process.kill(state.pid!, 'SIGKILL');
        if (c.fault !== 'kill-wrapper') process.kill(agent!.pid, 'SIGKILL');
        // An orphaned agent that survived its wrapper may finish; a dead one is requeued.
        if (c.fault === 'kill-wrapper') await release(agent!.session);
      }
    }

    let text = await waitForTag(file, ['#done-fix', '#needs-fix'], 40_000);
    let requeued = false;
    if (tagsOf(text).includes('#needs-fix')) {
      requeued = true;
      expect(recoveries(text), text).toBe(1);
      expect(text).not.toContain('**Session**:');
      if (c.failpoint) await restartClean();
      const before = s.agents().length;
      const approve = await runCli(['tag', 'approve', file, '--to', 'delegated']);
      expect(approve.code, approve.stderr).toBe(0);
      if (c.mode === 'hold') {
        const starts = await waitFor(() => s.agents().length > before && s.agents());
        await release(starts.at(-1)!.session);
      }
      text = await waitForTag(file, ['#done-fix'], 40_000);
    }
    // Let the daemon see the end of the claim before counting.
    await waitFor(() => events(s.root).some((e) => e.event === 'done' || e.event === 'exited'), {
      message: `the end of the claim in the event log; ${daemon.output().slice(-3000)}`,
    });

    const tags = tagsOf(text);
    const agents = s.agents();
    const claims = events(s.root).filter((e) => e.event === 'claimed');
    const perSession = countBy(agents, (a) => a.session);
    let duplicates = [...perSession.values()].filter((n) => n > 1).length;
    // One claim per attempt: the first, plus one per re-approval after a requeue.
    duplicates += Math.max(0, claims.length - 1 - recoveries(text));
    // Two agents alive at once for one item: an earlier agent must be dead when a later starts.
    duplicates += agents.slice(0, -1).filter((a) => isAlive(a.pid)).length;
    const lost =
      tags.filter((t) => t === '#done-fix').length === 1 &&
      !tags.some((t) => /^#(claimed|delegated|needs)-/.test(t)) &&
      text.includes(HUMAN)
        ? 0
        : 1;
    expect(daemon.child.exitCode, daemon.output()).toBeNull();
    return { duplicates, lost, requeued };
  } finally {
    await s.close();
  }
}

describe.concurrent('crash matrix: every item ends done exactly once', () => {
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of CASES) {
      it(`${c.name}${ROUNDS > 1 ? ` (round ${round + 1})` : ''}`, async () => {
        const outcome = await runCase(c);
        totals.cases++;
        totals.duplicates += outcome.duplicates;
        totals.lost += outcome.lost;
        if (outcome.requeued) totals.requeued++;
        recordFigure('crash-case', { case: c.name, ...outcome });
        expect({ duplicates: outcome.duplicates, lost: outcome.lost }).toEqual({
          duplicates: 0,
          lost: 0,
        });
      }, 120_000);
    }
  }
});

afterAll(() => recordFigure('crash-matrix', { ...totals }));
