import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeFinished, closeStep, type CloseFacts } from '../../src/daemon/close-finished.js';
import { DaemonShared } from '../../src/daemon/daemon-shared.js';
import type { EventInput } from '../../src/sessions/event-log.js';
import { readProcessIdentity } from '../../src/process/process-identity.js';
import type { Runner, TerminalInput } from '../../src/runners/runner.js';
import { recordAgentHook } from '../../src/agents/agent-state.js';
import type { SessionState } from '../../src/sessions/session-state.js';
import {
  closeMarkTime,
  markSessionDone,
  takeCloseMark,
} from '../../src/sessions/session-markers.js';
import { craftedState } from '../helpers/crafted-state.js';
import { inProcessContext } from '../helpers/in-process-context.js';
import { Children, exited } from '../process/spawned.js';

const MIN = 60_000;
const GRACE = 10_000;
const DONE = 1_000_000;
const facts = (over: Partial<CloseFacts>): CloseFacts => ({
  agent: 'claude',
  doneAtMs: DONE,
  limitedAtMs: null,
  askedAtMs: null,
  termAtMs: null,
  killAtMs: null,
  atPrompt: true,
  closeAfterMs: 5 * MIN,
  graceMs: GRACE,
  nowMs: DONE,
  ...over,
});

describe('closeStep, the decision to close a finished interactive agent', () => {
  it('never closes an agent whose item is not done, however long it has run', () => {
    expect(closeStep(facts({ doneAtMs: null, nowMs: DONE + 1000 * MIN }))).toEqual({
      kind: 'never',
    });
  });

  it('never closes with --close-after-done 0', () => {
    expect(closeStep(facts({ closeAfterMs: 0, nowMs: DONE + 1000 * MIN }))).toEqual({
      kind: 'never',
    });
  });

  it.each(['claude-print', 'custom', undefined])('never closes a %s agent', (agent) => {
    expect(closeStep(facts({ agent, nowMs: DONE + 1000 * MIN }))).toEqual({ kind: 'never' });
  });

  it.each(['claude', 'claude-print', 'custom', undefined])(
    'closes a superseded %s agent at once (its work cannot count), by a signal unless at its prompt',
    (agent) => {
      const at = DONE + MIN;
      const over = { agent, doneAtMs: null, supersededAtMs: at, nowMs: at };
      expect(closeStep(facts({ ...over, nowMs: at - 1 }))).toEqual({ kind: 'wait', atMs: at });
      expect(closeStep(facts({ ...over, atPrompt: false }))).toEqual({
        kind: 'signal',
        signal: 'SIGTERM',
        nextAtMs: at + GRACE,
        skipsAsk: true,
      });
    },
  );

  it('leaves it open for --close-after-done after the done mark, then asks it to exit', () => {
    expect(closeStep(facts({ nowMs: DONE }))).toEqual({ kind: 'wait', atMs: DONE + 5 * MIN });
    expect(closeStep(facts({ nowMs: DONE + 5 * MIN - 1 }))).toEqual({
      kind: 'wait',
      atMs: DONE + 5 * MIN,
    });
    expect(closeStep(facts({ nowMs: DONE + 5 * MIN }))).toEqual({ kind: 'ask' });
  });

  it('takes a fraction of a minute', () => {
    expect(closeStep(facts({ closeAfterMs: 0.05 * MIN, nowMs: DONE + 2999 }))).toEqual({
      kind: 'wait',
      atMs: DONE + 3000,
    });
  });

  it('asks first even when the deadline passed long ago (a daemon that was down meanwhile)', () => {
    expect(closeStep(facts({ nowMs: DONE + 1000 * MIN }))).toEqual({ kind: 'ask' });
  });

  it('signals SIGTERM a grace period after the ask, SIGKILL a grace period after the SIGTERM', () => {
    const asked = DONE + 6 * MIN;
    expect(closeStep(facts({ askedAtMs: asked, nowMs: asked + GRACE - 1 }))).toEqual({
      kind: 'wait',
      atMs: asked + GRACE,
    });
    expect(closeStep(facts({ askedAtMs: asked, nowMs: asked + GRACE }))).toEqual({
      kind: 'signal',
      signal: 'SIGTERM',
      nextAtMs: asked + 2 * GRACE,
      skipsAsk: false,
    });
    const termed = asked + GRACE + 500;
    expect(closeStep(facts({ askedAtMs: asked, termAtMs: termed, nowMs: termed + GRACE }))).toEqual(
      { kind: 'signal', signal: 'SIGKILL', nextAtMs: Number.POSITIVE_INFINITY, skipsAsk: false },
    );
  });

  it('takes each step once, however often it looks: SIGTERM once, SIGKILL once, then nothing', () => {
    const asked = DONE + 6 * MIN;
    const termed = asked + GRACE;
    // Looked at again and again after the SIGTERM (every --poll-ms, or a restarted daemon).
    for (const nowMs of [termed, termed + 1, termed + GRACE / 2, termed + GRACE - 1])
      expect(closeStep(facts({ askedAtMs: asked, termAtMs: termed, nowMs }))).toEqual({
        kind: 'wait',
        atMs: termed + GRACE,
      });
    const killed = termed + GRACE;
    for (const nowMs of [killed, killed + GRACE, killed + 1000 * MIN])
      expect(
        closeStep(facts({ askedAtMs: asked, termAtMs: termed, killAtMs: killed, nowMs })),
      ).toEqual({ kind: 'exhausted' });
  });

  describe('an agent not at its own prompt (it waits for an answer, works, or its state is unknown)', () => {
    it('is never asked, since a key could answer its question: SIGTERM when the close is due, SIGKILL a grace period later', () => {
      const due = DONE + 5 * MIN;
      expect(closeStep(facts({ atPrompt: false, nowMs: due - 1 }))).toEqual({
        kind: 'wait',
        atMs: due,
      });
      expect(closeStep(facts({ atPrompt: false, nowMs: due }))).toEqual({
        kind: 'signal',
        signal: 'SIGTERM',
        nextAtMs: due + GRACE,
        skipsAsk: true,
      });
      expect(closeStep(facts({ atPrompt: false, termAtMs: due, nowMs: due + GRACE - 1 }))).toEqual({
        kind: 'wait',
        atMs: due + GRACE,
      });
      expect(closeStep(facts({ atPrompt: false, termAtMs: due, nowMs: due + GRACE }))).toEqual({
        kind: 'signal',
        signal: 'SIGKILL',
        nextAtMs: Number.POSITIVE_INFINITY,
        skipsAsk: false,
      });
    });

    it('once asked at its prompt, goes on to SIGTERM after the grace period whatever its state now', () => {
      const asked = DONE + 5 * MIN;
      expect(closeStep(facts({ atPrompt: false, askedAtMs: asked, nowMs: asked + 1 }))).toEqual({
        kind: 'wait',
        atMs: asked + GRACE,
      });
    });
  });

  describe('an agent its hooks report limited (a usage limit: it waits instead of exiting)', () => {
    const LIMITED = 2_000_000;
    it('is asked to exit at once, done or not, even with --close-after-done 0', () => {
      expect(closeStep(facts({ doneAtMs: null, limitedAtMs: LIMITED, nowMs: LIMITED }))).toEqual({
        kind: 'ask',
      });
      expect(
        closeStep(facts({ doneAtMs: null, limitedAtMs: LIMITED, closeAfterMs: 0, nowMs: LIMITED })),
      ).toEqual({ kind: 'ask' });
    });

    it('then signalled after the grace periods, as a finished one', () => {
      const limited = { doneAtMs: null, limitedAtMs: LIMITED, askedAtMs: LIMITED };
      expect(closeStep(facts({ ...limited, nowMs: LIMITED + GRACE - 1 }))).toEqual({
        kind: 'wait',
        atMs: LIMITED + GRACE,
      });
      expect(closeStep(facts({ ...limited, nowMs: LIMITED + GRACE }))).toEqual({
        kind: 'signal',
        signal: 'SIGTERM',
        nextAtMs: LIMITED + 2 * GRACE,
        skipsAsk: false,
      });
    });

    it('is never closed once it is no longer limited and not done', () => {
      expect(
        closeStep(
          facts({ doneAtMs: null, limitedAtMs: null, askedAtMs: LIMITED, nowMs: LIMITED * 2 }),
        ),
      ).toEqual({ kind: 'never' });
    });

    it.each(['claude-print', 'custom', undefined])('never closes a limited %s agent', (agent) => {
      expect(closeStep(facts({ agent, limitedAtMs: LIMITED, nowMs: LIMITED }))).toEqual({
        kind: 'never',
      });
    });
  });
});

describe('an ask made for an earlier reason', () => {
  it('does not count for a later close: a limited agent a human took over is asked again when done, not signalled', () => {
    // Asked for a limit long before; the human took it over, then finished the item.
    const askedForLimit = DONE - 60 * MIN;
    expect(closeStep(facts({ askedAtMs: askedForLimit, nowMs: DONE + 5 * MIN }))).toEqual({
      kind: 'ask',
    });
    // Nor do signals sent for that limit.
    expect(
      closeStep(
        facts({
          askedAtMs: askedForLimit,
          termAtMs: askedForLimit + GRACE,
          killAtMs: askedForLimit + 2 * GRACE,
          nowMs: DONE + 5 * MIN,
        }),
      ),
    ).toEqual({ kind: 'ask' });
    // The ask for this close (its mark renewed at the due time, a clock tick behind) counts.
    expect(closeStep(facts({ askedAtMs: DONE + 5 * MIN - 4, nowMs: DONE + 5 * MIN + 1 }))).toEqual({
      kind: 'wait',
      atMs: DONE + 5 * MIN - 4 + GRACE,
    });
  });
});

describe('takeCloseMark', () => {
  it('is taken once per close: a second caller, or a restarted daemon, does not take the step again; a mark older than the close is renewed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-close-mark-'));
    try {
      for (const mark of ['ask', 'SIGTERM', 'SIGKILL'] as const) {
        expect(await closeMarkTime(dir, mark)).toBeNull();
        expect(await takeCloseMark(dir, mark, Date.now() - MIN)).toBe(true);
        expect(await takeCloseMark(dir, mark, Date.now() - MIN)).toBe(false);
      }
      const old = new Date(Date.now() - 60 * MIN);
      await utimes(join(dir, '.close-term'), old, old);
      const staleBefore = Date.now() - MIN;
      expect(await takeCloseMark(dir, 'SIGTERM', staleBefore)).toBe(true);
      expect((await closeMarkTime(dir, 'SIGTERM'))!).toBeGreaterThanOrEqual(staleBefore);
      expect(await takeCloseMark(dir, 'SIGTERM', staleBefore)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('closeFinished: what is typed into a finished agent, with a real agent process and files', () => {
  const children = new Children();
  const dirs: string[] = [];
  afterEach(async () => {
    await children.killAll();
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  /**
   * A claude session done long ago (closed after 1 ms), its agent a real `sleep`, its pane `%1`
   * on the runner's socket; the runner records what it is asked to type, running `onType` first.
   */
  async function finished(onType: (dir: string) => Promise<void> = async () => undefined) {
    const root = await mkdtemp(join(tmpdir(), 'engine-close-keys-'));
    dirs.push(root);
    const dir = join(root, 'sessions', 's1');
    await mkdir(dir, { recursive: true });
    await markSessionDone(dir);
    const agent = children.spawn('sleep', ['600']);
    const identity = readProcessIdentity(agent.pid as number)!;
    const state = craftedState(root, join(root, 'sessions', 'r.md'), 'sessions/s1', {
      agent: 'claude',
      agentPid: identity.pid,
      agentStartTicks: identity.startTicks,
      bootId: identity.bootId,
      tmux: { socket: 'sock', session: 'dispatch', window: '@1', pane: '%1' },
    }) as unknown as SessionState;
    const typed: TerminalInput[][] = [];
    const runner: Partial<Runner> = {
      kind: 'tmux',
      typeInto: async (_target, input, mayType) => {
        await onType(dir);
        if (mayType && !(await mayType())) return false;
        typed.push([...input]);
        return true;
      },
      viewers: async () => 0,
    };
    const events: EventInput[] = [];
    const ctx = inProcessContext(root, {
      runner: runner as Runner,
      options: { closeAfterDoneMs: 1, tmuxSocket: 'sock' },
      recordEvent: async (event) => void events.push(event),
    });
    return { shared: new DaemonShared(ctx), dir, state, agent, typed, events };
  }

  it('asks an agent idle at its prompt with Ctrl-C twice, in one input: no text, no Enter', async () => {
    const f = await finished();
    await recordAgentHook(f.dir, { hook_event_name: 'Stop' }, new Date());
    await closeFinished(f.shared, f.dir, f.state);
    expect(f.typed).toEqual([[{ key: 'C-c', repeat: 2 }]]);
    expect(f.events.map((e) => e.step)).toEqual(['ask']);
  });

  it('types nothing when the agent starts to ask a question between the look and the keys', async () => {
    const f = await finished((dir) =>
      recordAgentHook(
        dir,
        { hook_event_name: 'PermissionRequest', tool_name: 'Write' },
        new Date(),
      ).then(() => undefined),
    );
    await recordAgentHook(f.dir, { hook_event_name: 'Stop' }, new Date());
    await closeFinished(f.shared, f.dir, f.state);
    expect(f.events.map((e) => e.step)).toEqual(['ask']);
    expect(f.typed).toEqual([]);
  });

  it.each([
    ['waits for an answer', { hook_event_name: 'PermissionRequest', tool_name: 'Write' }],
    ['is working', { hook_event_name: 'PreToolUse', tool_name: 'Write' }],
    ['reported no state', null],
  ])('never types into an agent that %s: SIGTERM at once', async (_, hook) => {
    const f = await finished();
    if (hook) await recordAgentHook(f.dir, hook, new Date());
    await closeFinished(f.shared, f.dir, f.state);
    expect(f.typed).toEqual([]);
    expect(f.events.map((e) => [e.step, e.agentState])).toEqual([
      [
        'SIGTERM',
        hook ? (hook.hook_event_name === 'PreToolUse' ? 'working' : 'waiting') : 'unknown',
      ],
    ]);
    await exited(f.agent);
    expect(f.agent.signalCode).toBe('SIGTERM');
    expect(existsSync(join(f.dir, '.close-asked'))).toBe(false);
  });
});
