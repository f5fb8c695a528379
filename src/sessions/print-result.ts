/**
 * The outcome of a `claude-print` run, from its terminal output (`agent.log`): the last line of
 * `--output-format stream-json` whose object has `type: "result"`. Only a whole line that parses
 * as JSON counts, so a result quoted in an earlier assistant text (an escaped string inside its
 * line) never does. An agent killed before its result, or a log cut mid-line, has none: null.
 */

export interface PrintResult {
  /** `completed`, `api_error`, ...; null when absent. */
  terminalReason: string | null;
  isError: boolean | null;
  numTurns: number | null;
  costUsd: number | null;
  durationMs: number | null;
  /** The HTTP status of the API error that ended the run (429: a usage limit); null for none. */
  apiErrorStatus: number | null;
  /** The Claude Code session id the run reported. */
  sessionId: string | null;
}

/** The last result line of `log`, or null when it has none. */
export function parsePrintResult(log: string): PrintResult | null {
  // tmux's pipe-pane gives the terminal's bytes: lines end in \r\n, and the CLI's cursor controls
  // (ESC [ ... ) may share a line. JSON escapes ESC inside strings, so a raw one is never data.
  const lines = log.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.replace(CONTROL_SEQUENCE, '').trim();
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

// eslint-disable-next-line no-control-regex -- the terminal's escape sequences are what it removes
const CONTROL_SEQUENCE = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
