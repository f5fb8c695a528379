import { describe, expect, it } from 'vitest';
import { parsePrintResult } from '../../src/agents/print-result.js';

/** A result line as the real CLI writes it (fields as measured on the real CLI). */
const RESULT = {
  type: 'result',
  subtype: 'success',
  is_error: false,
  terminal_reason: 'completed',
  num_turns: 2,
  total_cost_usd: 0.0123,
  duration_ms: 845,
  api_error_status: null,
  session_id: '7c0c6b8e-7f2a-4d6e-9a51-0c1d2e3f4a5b',
  result: 'Marked it done.',
};

const line = (value: unknown): string => JSON.stringify(value);
const INIT = line({ type: 'system', subtype: 'init', session_id: RESULT.session_id });
const ASSISTANT = (text: string) =>
  line({ type: 'assistant', message: { content: [{ type: 'text', text }] } });

describe('parsePrintResult', () => {
  it('reads the last result line of a terminal log (\\r\\n line ends)', () => {
    const log = [INIT, ASSISTANT('Done.'), line(RESULT), ''].join('\r\n');
    expect(parsePrintResult(log)).toEqual({
      terminalReason: 'completed',
      isError: false,
      numTurns: 2,
      costUsd: 0.0123,
      durationMs: 845,
      apiErrorStatus: null,
      sessionId: RESULT.session_id,
    });
  });

  it('reads a result line that shares its line with terminal control sequences', () => {
    const log = `${INIT}\r\n\u001b[?25l${line(RESULT)}\u001b[?25h\r\n\u001b[?25h`;
    expect(parsePrintResult(log)).toMatchObject({ terminalReason: 'completed', numTurns: 2 });
  });

  it('reads a usage limit: is_error, api_error, status 429', () => {
    const limited = {
      ...RESULT,
      is_error: true,
      terminal_reason: 'api_error',
      api_error_status: 429,
    };
    expect(parsePrintResult(`${INIT}\n${line(limited)}\n`)).toMatchObject({
      isError: true,
      terminalReason: 'api_error',
      apiErrorStatus: 429,
    });
  });

  it('takes only the last of several result lines', () => {
    const first = { ...RESULT, num_turns: 1, terminal_reason: 'api_error' };
    const log = [line(first), ASSISTANT('again'), line(RESULT)].join('\n');
    expect(parsePrintResult(log)).toMatchObject({ numTurns: 2, terminalReason: 'completed' });
  });

  it('never takes a result quoted inside an assistant text', () => {
    const quoted = ASSISTANT(`Here is one:\n${line({ ...RESULT, num_turns: 99 })}\n`);
    expect(parsePrintResult([INIT, quoted].join('\r\n'))).toBeNull();
    expect(parsePrintResult([INIT, quoted, line(RESULT)].join('\r\n'))).toMatchObject({
      numTurns: 2,
    });
    expect(parsePrintResult([INIT, line(RESULT), quoted].join('\r\n'))).toMatchObject({
      numTurns: 2,
    });
  });

  it('has no result for an absent, empty, truncated or garbage log', () => {
    expect(parsePrintResult('')).toBeNull();
    expect(parsePrintResult(`${INIT}\r\n${ASSISTANT('working')}\r\n`)).toBeNull();
    const whole = line(RESULT);
    for (let cut = 1; cut < whole.length; cut += 7) {
      expect(parsePrintResult(`${INIT}\r\n${whole.slice(0, cut)}`)).toBeNull();
    }
    expect(parsePrintResult('\u0000\u001b[2J{"type":"result" garbage\n\uFFFD\uFFFD')).toBeNull();
    expect(parsePrintResult('["result"]\n"result"\nnull\n{"type":"results"}')).toBeNull();
  });

  it('gives null for a field that is missing or of the wrong type', () => {
    expect(
      parsePrintResult(
        line({ type: 'result', is_error: 'no', num_turns: '2', total_cost_usd: null }),
      ),
    ).toEqual({
      terminalReason: null,
      isError: null,
      numTurns: null,
      costUsd: null,
      durationMs: null,
      apiErrorStatus: null,
      sessionId: null,
    });
  });
});
