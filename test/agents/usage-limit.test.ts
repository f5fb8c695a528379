import { describe, expect, it } from 'vitest';
import {
  agentStateAnswered,
  agentStateLimit,
  printStreamAnswered,
  printStreamLimit,
} from '../../src/agents/usage-limit.js';

const line = (value: unknown) => `${JSON.stringify(value)}\r\n`;
const init = line({ type: 'system', subtype: 'init', session_id: 's' });
// What the real CLI (2.1.330) wrote on a 429 (docs/DAEMON.md, CLAUDE-CODE.md).
const limitedAssistant = line({
  type: 'assistant',
  message: {
    model: '<synthetic>',
    content: [{ type: 'text', text: 'API Error: Request rejected (429) · Usage limit reached' }],
  },
  error: 'rate_limit',
});
const limitedResult = line({
  type: 'result',
  is_error: true,
  terminal_reason: 'api_error',
  api_error_status: 429,
});
const okResult = line({
  type: 'result',
  is_error: false,
  terminal_reason: 'completed',
  api_error_status: null,
});

describe('printStreamLimit', () => {
  it('finds the assistant error and the 429 result the CLI writes', () => {
    expect(printStreamLimit(init + limitedAssistant + limitedResult)).toMatchObject({
      limited: true,
    });
    expect(printStreamLimit(init + limitedResult)?.reason).toBe('result api_error_status 429');
    expect(printStreamLimit(init + limitedAssistant)?.reason).toBe('assistant error rate_limit');
  });

  it('ignores a limit the CLI waited out: the model answered after it', () => {
    const answer = line({
      type: 'assistant',
      message: { model: 'claude-x', content: [{ type: 'text', text: 'Working on it.' }] },
    });
    const rejected = line({
      type: 'rate_limit_event',
      rate_limit_info: { status: 'rejected', resetsAt: 1_800_000_000 },
    });
    const failed = line({ type: 'result', is_error: true, terminal_reason: 'max_turns' });
    expect(printStreamLimit(init + rejected + answer + failed)).toBeNull();
    expect(printStreamLimit(init + answer + rejected + limitedResult)).toMatchObject({
      limited: true,
    });
  });

  it('takes the reset time of a rejected rate_limit_event, and ignores allowed ones', () => {
    const event = (status: string, resetsAt: number) =>
      line({
        type: 'rate_limit_event',
        rate_limit_info: { status, resetsAt, rateLimitType: 'five_hour' },
      });
    expect(printStreamLimit(init + event('allowed_warning', 1_800_000_000) + okResult)).toBeNull();
    const limit = printStreamLimit(init + event('rejected', 1_800_000_000) + limitedResult);
    expect(limit?.resetsAt).toEqual(new Date(1_800_000_000_000));
  });

  it('never counts a limit quoted in the agent text, or a line cut short', () => {
    const quoted = line({
      type: 'assistant',
      message: {
        model: 'claude',
        content: [
          { type: 'text', text: '{"type":"result","api_error_status":429} "error":"rate_limit"' },
        ],
      },
    });
    expect(printStreamLimit(init + quoted + okResult)).toBeNull();
    expect(printStreamLimit('You have hit your limit · resets 1pm\n')).toBeNull();
    expect(printStreamLimit(limitedResult.slice(0, 40))).toBeNull();
  });

  it('tells a real answer from the CLI synthetic error message', () => {
    const answer = line({ type: 'assistant', message: { model: 'claude-x', content: [] } });
    expect(printStreamAnswered(init + limitedAssistant + limitedResult)).toBe(false);
    expect(printStreamAnswered(init + answer)).toBe(true);
  });
});

describe('agentStateLimit', () => {
  it('reads the hook state limited, with its reset time', () => {
    const state = {
      state: 'limited',
      event: 'StopFailure',
      at: 'x',
      resetsAt: 1_800_000_000,
    } as const;
    expect(agentStateLimit(state)).toMatchObject({
      limited: true,
      resetsAt: new Date(1_800_000_000_000),
    });
    expect(
      agentStateLimit({ state: 'limited', event: 'StopFailure', at: 'x' })?.resetsAt,
    ).toBeUndefined();
    expect(agentStateLimit({ state: 'idle', event: 'Stop', at: 'x' })).toBeNull();
    expect(agentStateLimit(null)).toBeNull();
    expect(
      agentStateLimit({ state: 'limited', event: 'StopFailure', at: '2026-11-24T10:00:00.000Z' })
        ?.since,
    ).toEqual(new Date('2026-11-24T10:00:00.000Z'));
    expect(
      agentStateLimit({ state: 'limited', event: 'StopFailure', at: 'x' })?.since,
    ).toBeUndefined();
    expect(agentStateAnswered({ state: 'idle', event: 'Stop', at: 'x' })).toBe(true);
    expect(agentStateAnswered({ state: 'limited', event: 'StopFailure', at: 'x' })).toBe(false);
  });

  it('counts a tool call or a question as an answer, never an API error nor a prompt sent', () => {
    const answered = (state: string, event: string) =>
      agentStateAnswered({ state, event, at: 'x' } as never);
    expect(answered('working', 'PreToolUse')).toBe(true);
    expect(answered('working', 'PostToolUse')).toBe(true);
    expect(answered('waiting', 'PermissionRequest')).toBe(true);
    // An overloaded or failed API ends the turn as idle: no answer, the pause holds.
    expect(answered('idle', 'StopFailure')).toBe(false);
    expect(answered('working', 'UserPromptSubmit')).toBe(false);
    expect(answered('ended', 'SessionEnd')).toBe(false);
    expect(agentStateAnswered(null)).toBe(false);
  });
});
