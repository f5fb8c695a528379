/**
 * The `waiting-for-input` event and `engine status`'s agentState, through the real daemon: a held
 * test agent, and the hooks played by running the real `engine agent-hook` with the session's
 * environment and the hook inputs the installed Claude Code sends (docs/DAEMON.md). The real CLI
 * firing them is test/claude/agent-state.test.ts.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DaemonOptions } from '../../src/daemon/daemon-context.js';
import { newWait, WaitingWatch } from '../../src/daemon/waiting-for-input.js';
import { recordAgentHook, type AgentState } from '../../src/agents/agent-state.js';
import { appendEvent, type EventInput } from '../../src/sessions/event-log.js';
import {
  events,
  release,
  useDaemonHarness,
  waitForReady,
  waitForState,
  waitForText,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const waiting = (at: string): AgentState => ({ state: 'waiting', event: 'Notification', at });

describe('newWait (pure)', () => {
  it('is a wait not yet announced', () => {
    expect(newWait(null, waiting('t1'))).toBe(true);
    expect(newWait('t1', waiting('t1'))).toBe(false);
    expect(newWait('t1', waiting('t2'))).toBe(true);
    expect(newWait(null, { state: 'working', event: 'PreToolUse', at: 't1' })).toBe(false);
    expect(newWait(null, null)).toBe(false);
  });
});

describe('WaitingWatch', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-waiting-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('announces a wait once, also across a restart of the daemon (a new watch on the same wait)', async () => {
    const recorded: EventInput[] = [];
    const logged: string[] = [];
    const ctx = {
      options: { root } as DaemonOptions,
      log: (_level: string, message: string) => void logged.push(message),
      recordEvent: async (event: EventInput) => {
        recorded.push(event);
        await appendEvent(root, { ...event, time: new Date().toISOString() });
      },
    };
    const item = { file: join(root, 'R.md'), noun: 'fix', session: 'sessions/s1' };
    const dir = join(root, 's1');
    await mkdir(dir);
    const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 10, 0, s));
    const watch = new WaitingWatch(ctx, dir, item);
    await watch.check();
    await recordAgentHook(dir, { hook_event_name: 'PermissionRequest', tool_name: 'Bash' }, at(0));
    await watch.check();
    await watch.check();
    expect(recorded).toEqual([
      {
        event: 'waiting-for-input',
        ...item,
        reason: 'permission for Bash',
        since: at(0).toISOString(),
      },
    ]);
    // One log line per wait, naming the item and the question.
    expect(logged).toEqual([
      `${item.file} (#claimed-fix, sessions/s1) waits for input: permission for Bash`,
    ]);
    // The daemon restarts during the same wait, now told by a Notification.
    const notification = {
      hook_event_name: 'Notification',
      notification_type: 'permission_prompt',
      message: 'm',
    };
    await recordAgentHook(dir, notification, at(6));
    await new WaitingWatch(ctx, dir, item).check();
    expect(recorded).toHaveLength(1);
    // Answered, then a new wait: announced, by a watch that never saw the first.
    await recordAgentHook(dir, { hook_event_name: 'PostToolUse' }, at(8));
    await recordAgentHook(dir, notification, at(9));
    await new WaitingWatch(ctx, dir, item).check();
    expect(recorded.map((e) => e.since)).toEqual([at(0).toISOString(), at(9).toISOString()]);
  });

  it('does not throw when the agent state cannot be read as a wait', async () => {
    const ctx = {
      options: { root } as DaemonOptions,
      log: () => undefined,
      recordEvent: () => Promise.reject(new Error('disk full')),
    };
    const dir = join(root, 's2');
    await mkdir(dir);
    await recordAgentHook(
      dir,
      { hook_event_name: 'Notification', notification_type: 'idle_prompt' },
      new Date(),
    );
    await expect(
      new WaitingWatch(ctx, dir, { file: 'f', noun: 'fix', session: 's2' }).check(),
    ).resolves.toBeUndefined();
  });
});

describe('waiting-for-input', () => {
  const h = useDaemonHarness();

  /** Runs a hook of the agent of `session` as Claude Code would. */
  async function hook(session: string, input: Record<string, unknown>): Promise<void> {
    const run = await runCli(['agent-hook'], {
      env: { ...process.env, ENGINE_SESSION_DIR: session },
      input: JSON.stringify({ session_id: 'x', cwd: h.root, ...input }),
    });
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
  }

  interface Running {
    session: string;
    agentState: AgentState | null;
  }

  async function running(): Promise<Running[]> {
    const status = await runCli(['status', '--json', '--root', h.root]);
    return (JSON.parse(status.stdout) as { running: Running[] }).running;
  }

  const waits = () =>
    events(h.root).filter((e) => e.event === 'waiting-for-input') as Array<
      EventInput & { since?: string }
    >;

  it('is recorded once per wait, and engine status shows the wait as the one to act on', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('WAIT.md', '# W\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    const session = agent!.session;
    await waitForState(session, (s) => s.status === 'running');
    const ref = session.slice(h.root.length + 1);

    await hook(session, { hook_event_name: 'PreToolUse', tool_name: 'Bash' });
    await waitFor(async () => (await running())[0]?.agentState?.state === 'working', {
      message: 'agentState working in engine status',
    });
    expect(waits()).toEqual([]);

    await hook(session, { hook_event_name: 'PermissionRequest', tool_name: 'Bash' });
    await hook(session, {
      hook_event_name: 'Notification',
      message: 'Claude needs your permission to use Bash',
      notification_type: 'permission_prompt',
    });
    const [wait] = await waitFor(() => waits().length > 0 && waits(), {
      message: 'a waiting-for-input event',
    });
    expect(wait).toMatchObject({ file, noun: 'fix', session: ref });
    const [item] = await running();
    expect(item?.agentState).toMatchObject({
      state: 'waiting',
      event: 'Notification',
      at: wait?.since,
      detail: 'Claude needs your permission to use Bash',
    });
    const status = await runCli(['status', '--json', '--root', h.root]);
    expect((JSON.parse(status.stdout) as { needsYou: unknown[] }).needsYou).toEqual([
      {
        kind: 'input',
        file,
        noun: 'fix',
        session: ref,
        since: wait?.since,
        question: 'Claude needs your permission to use Bash',
      },
    ]);
    const text = await runCli(['status', '--root', h.root]);
    expect(text.stdout.replace(/\s+/g, ' ')).toMatch(
      /Needs you \(1\): sessions\/WAIT\.md #claimed-fix AGENT WAITING FOR INPUT since (?:just now|.+ ago): Claude needs your permission to use Bash/,
    );

    // The agent goes on, then waits again: a second wait, a second event.
    await hook(session, { hook_event_name: 'PostToolUse', tool_name: 'Bash' });
    await hook(session, {
      hook_event_name: 'Notification',
      message: 'Claude is waiting for your input',
      notification_type: 'idle_prompt',
    });
    await waitFor(() => waits().length === 2, {
      message: () => `a second wait recorded; events: ${JSON.stringify(waits())}`,
    });
    expect(waits()[1]).toMatchObject({ session: ref, reason: 'Claude is waiting for your input' });
    expect(waits()[1]?.since).not.toBe(wait?.since);

    await release(session);
    await waitForText(file, '#done-fix');
    expect(waits()).toHaveLength(2);
  });
});
