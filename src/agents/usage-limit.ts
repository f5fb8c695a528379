/**
 * Whether an agent stopped on a usage limit, decided from structured fields only, never from a
 * pattern over the agent's own text (a quoted limit message once halted a peer's dispatch for
 * hours): the print profile's stream-json lines, or the interactive profile's hook state.
 */
import type { AgentState } from './agent-state.js';

export interface UsageLimit {
  limited: true;
  /** When the limit resets, when the agent said so. */
  resetsAt?: Date;
  /** Which field said so, for logs. */
  reason: string;
  /** When the agent reported it, when known: the limit backoff counts from then. */
  since?: Date;
}

// eslint-disable-next-line no-control-regex -- the terminal's escape sequences are what it removes
const CONTROL_SEQUENCE = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** The whole lines of a stream-json log that parse as JSON objects; quoted JSON never counts. */
function streamObjects(log: string): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  for (const raw of log.split('\n')) {
    const line = raw.replace(CONTROL_SEQUENCE, '').trim();
    if (!line.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value)) objects.push(value);
    } catch {
      // A line cut short, or terminal output that is not the stream.
    }
  }
  return objects;
}

/**
 * A `claude -p --output-format stream-json` run that hit a usage limit: an assistant line with
 * `"error":"rate_limit"`, a result with `api_error_status` 429, or a `rate_limit_event` whose
 * `rate_limit_info.status` is `rejected` (which also gives `resetsAt`, epoch seconds), with no
 * answer of the model after it: a limit the CLI waited out is not what ended the run.
 */
export function printStreamLimit(log: string): UsageLimit | null {
  let limit: UsageLimit | null = null;
  let resetsAt: Date | undefined;
  for (const line of streamObjects(log)) {
    if (line.type === 'rate_limit_event' && isRecord(line.rate_limit_info)) {
      const info = line.rate_limit_info;
      if (info.status !== 'rejected') continue;
      resetsAt = epochSeconds(info.resetsAt) ?? resetsAt;
      limit ??= { limited: true, reason: 'rate_limit_event rejected' };
    } else if (line.type === 'assistant' && line.error === 'rate_limit') {
      limit ??= { limited: true, reason: 'assistant error rate_limit' };
    } else if (line.type === 'result' && line.api_error_status === 429) {
      limit ??= { limited: true, reason: 'result api_error_status 429' };
    } else if (isAnswer(line)) {
      // The CLI waited the limit out and the model answered: the run did not end on it.
      limit = null;
      resetsAt = undefined;
    }
  }
  if (limit === null) return null;
  return resetsAt === undefined ? limit : { ...limit, resetsAt };
}

/** The interactive profile's hook state `limited` (agent-state.json). */
export function agentStateLimit(state: AgentState | null): UsageLimit | null {
  if (state?.state !== 'limited') return null;
  const resetsAt = epochSeconds(state.resetsAt);
  const since = new Date(state.at);
  return {
    limited: true,
    reason: `hook ${state.event} reported a usage limit`,
    ...(resetsAt === undefined ? {} : { resetsAt }),
    ...(Number.isFinite(since.getTime()) ? { since } : {}),
  };
}

/**
 * Whether a print run got a real answer from the API: an assistant line from a model (not the
 * CLI's `<synthetic>` error message) without an error. A probe that got one is past the limit.
 */
export function printStreamAnswered(log: string): boolean {
  return streamObjects(log).some(isAnswer);
}

/** An assistant line from a model (not the CLI's `<synthetic>` error message), without an error. */
function isAnswer(line: Record<string, unknown>): boolean {
  return (
    line.type === 'assistant' &&
    line.error === undefined &&
    isRecord(line.message) &&
    line.message.model !== '<synthetic>'
  );
}

/**
 * The interactive profile's hooks show the model answered: it called a tool (PreToolUse,
 * PostToolUse), asks a human (waiting), or ended its turn (Stop). A StopFailure (an API error,
 * read as `idle` unless it is the limit) is no answer.
 */
export function agentStateAnswered(state: AgentState | null): boolean {
  switch (state?.state) {
    case 'waiting':
      return true;
    case 'idle':
      return state.event === 'Stop';
    case 'working':
      return TOOL_EVENTS.has(state.event);
    default:
      return false;
  }
}

const TOOL_EVENTS: ReadonlySet<string> = new Set([
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
]);

function epochSeconds(value: unknown): Date | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? new Date(value * 1000)
    : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
