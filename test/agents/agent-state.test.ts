import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  agentStateFromHook,
  atOwnPrompt,
  readAgentState,
  recordAgentHook,
  type AgentState,
} from '../../src/agents/agent-state.js';
import { sessionDir } from '../../src/sessions/session-dir.js';

const T0 = new Date('2026-11-24T10:00:00.000Z');
const T1 = new Date('2026-11-24T10:00:07.000Z');

/** The fields every hook input carries, as the installed CLI sent them (docs/DAEMON.md). */
const common = {
  session_id: '25ccf313-e0e4-4834-a00c-8ddbf363d4aa',
  transcript_path: '/h/.claude/projects/-r/25ccf313-e0e4-4834-a00c-8ddbf363d4aa.jsonl',
  cwd: '/r',
};
const hook = (event: string, fields: Record<string, unknown> = {}) => ({
  ...common,
  hook_event_name: event,
  ...fields,
});

describe('agent state from a hook input (pure)', () => {
  it.each([
    ['UserPromptSubmit', { prompt: '/fix x.md' }, 'working', undefined],
    ['PreToolUse', { tool_name: 'Bash', tool_input: { command: 'ls' } }, 'working', undefined],
    ['PostToolUse', { tool_name: 'Bash', tool_response: {} }, 'working', undefined],
    ['PostToolUseFailure', { tool_name: 'Bash', error: 'x' }, 'working', undefined],
    [
      'PermissionRequest',
      { tool_name: 'Bash', tool_input: {}, permission_suggestions: [] },
      'waiting',
      'permission for Bash',
    ],
    [
      'Notification',
      {
        message: 'Claude needs your permission to use Bash',
        notification_type: 'permission_prompt',
      },
      'waiting',
      'Claude needs your permission to use Bash',
    ],
    [
      'Notification',
      { message: 'Claude is waiting for your input', notification_type: 'idle_prompt' },
      'waiting',
      'Claude is waiting for your input',
    ],
    ['Stop', { stop_hook_active: false, last_assistant_message: 'done' }, 'idle', undefined],
    [
      'StopFailure',
      { error: 'rate_limit', last_assistant_message: 'API Error: Request rejected (429)' },
      'limited',
      'rate_limit',
    ],
    ['StopFailure', { error: 'server_error' }, 'idle', 'server_error'],
    ['SessionEnd', { reason: 'prompt_input_exit' }, 'ended', 'prompt_input_exit'],
  ])('%s %j -> %s', (event, fields, state, detail) => {
    expect(agentStateFromHook(hook(event, fields), T0, null)).toEqual({
      state,
      event,
      at: T0.toISOString(),
      ...(detail === undefined ? {} : { detail }),
      ...('notification_type' in fields ? { notification: fields.notification_type } : {}),
    });
  });

  it('a rate-limit StopFailure carries no reset time: the CLI gives none in the hook input', () => {
    const state = agentStateFromHook(hook('StopFailure', { error: 'rate_limit' }), T0, null);
    expect(state).not.toHaveProperty('resetsAt');
  });

  it('changes nothing for other events, other notification types, or what is not a hook input', () => {
    expect(agentStateFromHook(hook('SessionStart', { source: 'startup' }), T0, null)).toBeNull();
    expect(
      agentStateFromHook(
        hook('Notification', { message: 'Signed in', notification_type: 'auth_success' }),
        T0,
        null,
      ),
    ).toBeNull();
    expect(agentStateFromHook(hook('toString'), T0, null)).toBeNull();
    expect(agentStateFromHook(null, T0, null)).toBeNull();
    expect(agentStateFromHook('PreToolUse', T0, null)).toBeNull();
    expect(agentStateFromHook({ hook_event_name: 7 }, T0, null)).toBeNull();
  });

  it('keeps `at` while the state stays (one wait is one time), and restarts it on a change', () => {
    const asked = agentStateFromHook(hook('PermissionRequest', { tool_name: 'Bash' }), T0, null);
    const notified = agentStateFromHook(
      hook('Notification', { message: 'needs permission', notification_type: 'permission_prompt' }),
      T1,
      asked,
    );
    expect(notified).toMatchObject({
      state: 'waiting',
      event: 'Notification',
      at: T0.toISOString(),
    });
    const working = agentStateFromHook(hook('PostToolUse'), T1, notified);
    expect(working).toMatchObject({ state: 'working', at: T1.toISOString() });
  });

  it('keeps a usage limit over the end of the session it ended', () => {
    const limited = agentStateFromHook(hook('StopFailure', { error: 'rate_limit' }), T0, null);
    expect(agentStateFromHook(hook('SessionEnd', { reason: 'other' }), T1, limited)).toBeNull();
  });

  it('keeps a usage limit over the idle notification that follows it (a human would submit a prompt)', () => {
    const limited = agentStateFromHook(hook('StopFailure', { error: 'rate_limit' }), T0, null);
    const idle = hook('Notification', {
      message: 'Claude is waiting for your input',
      notification_type: 'idle_prompt',
    });
    expect(agentStateFromHook(idle, T1, limited)).toBeNull();
    expect(agentStateFromHook(hook('UserPromptSubmit'), T1, limited)).toMatchObject({
      state: 'working',
    });
    const asked = hook('Notification', { notification_type: 'permission_prompt' });
    expect(agentStateFromHook(asked, T1, limited)).toMatchObject({ state: 'waiting' });
  });

  it('cuts a long notification message for the status line', () => {
    const state = agentStateFromHook(
      hook('Notification', { message: 'x'.repeat(5000), notification_type: 'idle_prompt' }),
      T0,
      null,
    );
    expect(state?.detail).toHaveLength(200);
  });
});

describe('atOwnPrompt: whether keys typed into the agent can answer no question', () => {
  const after = (...events: [string, Record<string, unknown>?][]): AgentState | null =>
    events.reduce<AgentState | null>(
      (state, [event, fields]) => agentStateFromHook(hook(event, fields), T0, state) ?? state,
      null,
    );

  it('at its prompt: the turn ended, a usage limit, or idle at the prompt (idle_prompt)', () => {
    expect(atOwnPrompt(after(['Stop']))).toBe(true);
    expect(atOwnPrompt(after(['StopFailure', { error: 'server_error' }]))).toBe(true);
    expect(atOwnPrompt(after(['StopFailure', { error: 'rate_limit' }]))).toBe(true);
    expect(
      atOwnPrompt(after(['Stop'], ['Notification', { notification_type: 'idle_prompt' }])),
    ).toBe(true);
  });

  it('not while it asks a question, works (a dialog may come), ends, or has no state', () => {
    expect(atOwnPrompt(after(['PermissionRequest', { tool_name: 'Write' }]))).toBe(false);
    expect(
      atOwnPrompt(
        after(
          ['PermissionRequest', { tool_name: 'Write' }],
          ['Notification', { notification_type: 'permission_prompt' }],
        ),
      ),
    ).toBe(false);
    // An idle notification after a question does not answer it: only the agent's own next event.
    expect(
      atOwnPrompt(
        after(
          ['PermissionRequest', { tool_name: 'Write' }],
          ['Notification', { notification_type: 'idle_prompt' }],
        ),
      ),
    ).toBe(false);
    expect(
      atOwnPrompt(
        after(
          ['Notification', { notification_type: 'elicitation_dialog' }],
          ['Notification', { notification_type: 'idle_prompt' }],
        ),
      ),
    ).toBe(false);
    for (const type of ['elicitation_dialog', 'worker_permission_prompt', 'agent_needs_input'])
      expect(atOwnPrompt(after(['Notification', { notification_type: type }]))).toBe(false);
    expect(atOwnPrompt(after(['UserPromptSubmit']))).toBe(false);
    expect(atOwnPrompt(after(['PreToolUse', { tool_name: 'Write' }]))).toBe(false);
    expect(atOwnPrompt(after(['SessionEnd', { reason: 'other' }]))).toBe(false);
    expect(atOwnPrompt(null)).toBe(false);
  });
});

describe('agent-state.json', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-agent-state-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('records a hook input whole, and reads it back', async () => {
    const written = await recordAgentHook(dir, hook('PreToolUse', { tool_name: 'Bash' }), T0);
    const expected: AgentState = { state: 'working', event: 'PreToolUse', at: T0.toISOString() };
    expect(written).toEqual(expected);
    expect(JSON.parse(await readFile(sessionDir(dir).agentState, 'utf8'))).toEqual(expected);
    expect(await readAgentState(dir)).toEqual(expected);
  });

  it('leaves the file alone when a hook input changes nothing', async () => {
    await recordAgentHook(dir, hook('Stop'), T0);
    expect(await recordAgentHook(dir, hook('SessionStart'), T1)).toBeNull();
    expect(await recordAgentHook(dir, hook('Stop'), T1)).toBeNull();
    expect(await readAgentState(dir)).toMatchObject({ state: 'idle', at: T0.toISOString() });
  });

  it('records and reads back the notification type of a wait', async () => {
    await recordAgentHook(
      dir,
      hook('Notification', { message: 'waiting', notification_type: 'idle_prompt' }),
      T0,
    );
    expect(await readAgentState(dir)).toEqual({
      state: 'waiting',
      event: 'Notification',
      at: T0.toISOString(),
      detail: 'waiting',
      notification: 'idle_prompt',
    });
  });

  it('reads no state from a missing, torn or foreign file', async () => {
    expect(await readAgentState(dir)).toBeNull();
    await writeFile(sessionDir(dir).agentState, '{"state": "work');
    expect(await readAgentState(dir)).toBeNull();
    await writeFile(sessionDir(dir).agentState, '{"state": "asleep", "event": "x", "at": "y"}');
    expect(await readAgentState(dir)).toBeNull();
  });
});
