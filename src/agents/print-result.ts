/**
 * The outcome of a `claude-print` run, from its terminal output (`agent.log`): the last line of
 * `--output-format stream-json` whose object has `type: "result"`. Only a whole line that parses
 * as JSON counts, so a result quoted in an earlier assistant text (an escaped string inside its
 * line) never does. An agent killed before its result, or a log cut mid-line, has none: null.
 * The result's shape is what `.state.json` records (sessions/session-state.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { readAgentLogTail, withoutControlSequences } from '../sessions/agent-log.js';
import type { PrintResult, SessionState } from '../sessions/session-state.js';

/** The last result line of `log`, or null when it has none. */
export function parsePrintResult(log: string): PrintResult | null {
  // tmux's pipe-pane gives the terminal's bytes: lines end in \r\n, and the CLI's cursor controls
  // (ESC [ ... ) may share a line. JSON escapes ESC inside strings, so a raw one is never data.
  const lines = log.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = withoutControlSequences(lines[i]!).trim();
    if (!line.startsWith('{') || !line.includes('"result"')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(value) || value.type !== 'result') continue;
    return {
      terminalReason: stringOrNull(value.terminal_reason),
      isError: typeof value.is_error === 'boolean' ? value.is_error : null,
      numTurns: numberOrNull(value.num_turns),
      costUsd: numberOrNull(value.total_cost_usd),
      durationMs: numberOrNull(value.duration_ms),
      apiErrorStatus: numberOrNull(value.api_error_status),
      sessionId: stringOrNull(value.session_id),
    };
  }
  return null;
}

/**
 * What to patch into `.state.json` with a session's exit: for a `claude-print` run, its `result`
 * (null when it wrote none); nothing for other profiles. tmux writes the last output of a pane
 * through its pipe after the wrapper recorded its exit, so a log without a result is read again
 * until it has been quiet for `settleMs` (never longer than `maxWaitMs`).
 */
export async function exitResult(
  dir: string,
  state: Pick<SessionState, 'agent'>,
  { pollMs = 100, settleMs = 500, maxWaitMs = 3000 } = {},
): Promise<{ result?: PrintResult | null }> {
  if (state.agent !== 'claude-print') return {};
  const started = Date.now();
  let size = -1;
  let quietSince = Date.now();
  for (;;) {
    const tail = await readAgentLogTail(dir);
    const result = tail === null ? null : parsePrintResult(tail.text);
    if (result !== null) return { result };
    const now = Date.now();
    if ((tail?.size ?? -1) !== size) {
      size = tail?.size ?? -1;
      quietSince = now;
    }
    if (now - quietSince >= settleMs || now - started >= maxWaitMs) return { result: null };
    await sleep(pollMs);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
