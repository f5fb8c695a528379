/**
 * The agent's own state, from Claude Code's hooks rather than from its screen:
 * `<session>/agent-state.json` = `{state, event, at, detail?, resetsAt?}`. Written by
 * `engine agent-hook` only (each hook Claude Code runs for the agent), read by `readAgentState`.
 *
 * `at` is when the agent entered its state: a second event that keeps the state (a PostToolUse
 * after a PreToolUse, the permission_prompt Notification a few seconds after a
 * PermissionRequest) keeps it, so one wait has one `at` and is announced once, even by a daemon
 * that restarted meanwhile (src/daemon/waiting-for-input.ts).
 */
import { readFile } from 'node:fs/promises';
import { writeJsonAtomic } from '../files/write-json-atomic.js';
import { sessionDir } from '../sessions/session-dir.js';

export const AGENT_STATES = ['working', 'waiting', 'idle', 'ended', 'limited'] as const;
export type AgentStateName = (typeof AGENT_STATES)[number];

export interface AgentState {
  state: AgentStateName;
  /** The Claude Code hook event that set it, e.g. `PreToolUse`. */
  event: string;
  /** ISO time the agent entered this state. */
  at: string;
  detail?: string;
  /** The `notification_type` of the Notification that set or renewed a wait, e.g. `idle_prompt`. */
  notification?: string;
  /** When a usage limit lifts, epoch seconds, when the hook said. */
  resetsAt?: number;
}

/** The hook events engine registers (src/agents/claude-settings.ts) and what each one means. */
export const HOOK_STATES = {
  UserPromptSubmit: 'working',
  PreToolUse: 'working',
  PostToolUse: 'working',
  PostToolUseFailure: 'working',
  PermissionRequest: 'waiting',
  Notification: 'waiting',
  Stop: 'idle',
  StopFailure: 'idle',
  SessionEnd: 'ended',
} as const satisfies Record<string, AgentStateName>;
export type HookEvent = keyof typeof HOOK_STATES;

/**
 * The Notification types that ask a human for something (a permission dialog, the agent idle at
 * its prompt, an MCP question); the others (auth_success, agent_completed, ...) change nothing.
 */
export const WAITING_NOTIFICATIONS: ReadonlySet<string> = new Set([
  'permission_prompt',
  'idle_prompt',
  'elicitation_dialog',
  'elicitation_url_dialog',
  'worker_permission_prompt',
  'agent_needs_input',
]);

/** The Notification of an agent idle at its own prompt, asking nothing but a new prompt. */
const IDLE_PROMPT = 'idle_prompt';

/**
 * Whether the hooks say the agent sits at its own input prompt with nothing asked: its turn ended
 * (`idle`, `limited`), or it waits only for a new prompt (`idle_prompt`). Keys typed into it then
 * answer no question. In any other state (working: a permission dialog may come at any moment;
 * waiting for an answer; ended; or no state recorded) a question may be on its screen.
 */
export function atOwnPrompt(state: AgentState | null): boolean {
  if (state === null) return false;
  if (state.state === 'idle' || state.state === 'limited') return true;
  return state.state === 'waiting' && state.notification === IDLE_PROMPT;
}

/** Whether the agent waits for a human's answer (not merely for a new prompt). */
function asksAQuestion(state: AgentState | null): boolean {
  return state?.state === 'waiting' && state.notification !== IDLE_PROMPT;
}

/** StopFailure's `error` for a usage limit. */
const RATE_LIMIT_ERROR = 'rate_limit';

/** Long enough for a sentence of a notification, short enough for a status line. */
const DETAIL_CHARS = 200;

/**
 * The agent's state after the hook `payload` (its JSON input), or null when the payload changes
 * nothing (an event or notification type that says nothing about the agent, or not a hook's).
 */
export function agentStateFromHook(
  payload: unknown,
  now: Date,
  previous: AgentState | null,
): AgentState | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const fields = payload as Record<string, unknown>;
  const event = fields.hook_event_name;
  if (typeof event !== 'string' || !Object.hasOwn(HOOK_STATES, event)) return null;
  let state: AgentStateName = HOOK_STATES[event as HookEvent];
  let detail: unknown;
  let notification: string | undefined;
  switch (event as HookEvent) {
    case 'Notification':
      if (!WAITING_NOTIFICATIONS.has(String(fields.notification_type))) return null;
      notification = String(fields.notification_type);
      // An agent idle at its prompt after a usage limit still waits for the limit: the limit is
      // what its close and its requeue need (a human taking over submits a prompt instead).
      if (notification === IDLE_PROMPT && previous?.state === 'limited') return null;
      // Nor does it answer a question asked before: only a later event of the agent's own (a tool
      // run, a new prompt, the turn's end) says the question is gone. Read as "at its prompt",
      // it would let a close type into the question (measured: none comes while one is open).
      if (notification === IDLE_PROMPT && asksAQuestion(previous)) return null;
      detail = fields.message;
      break;
    case 'PermissionRequest':
      detail = typeof fields.tool_name === 'string' ? `permission for ${fields.tool_name}` : null;
      break;
    case 'StopFailure':
      if (fields.error === RATE_LIMIT_ERROR) state = 'limited';
      detail = fields.error;
      break;
    case 'SessionEnd':
      // An agent that ends after its usage limit ended for it: the limit is what a reader needs.
      if (previous?.state === 'limited') return null;
      detail = fields.reason;
      break;
    default:
  }
  const at = previous?.state === state ? previous.at : now.toISOString();
  return {
    state,
    event,
    at,
    ...(typeof detail === 'string' && detail !== ''
      ? { detail: detail.slice(0, DETAIL_CHARS) }
      : {}),
    ...(notification !== undefined ? { notification } : {}),
  };
}

/** The recorded state, or null when there is none (no hook ran yet, or not a Claude agent). */
export async function readAgentState(dir: string): Promise<AgentState | null> {
  const raw = await readFile(sessionDir(dir).agentState, 'utf8').catch(() => null);
  if (raw === null) return null;
  try {
    return parseAgentState(JSON.parse(raw));
  } catch {
    return null;
  }
}

function parseAgentState(value: unknown): AgentState | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!AGENT_STATES.includes(v.state as AgentStateName)) return null;
  if (typeof v.event !== 'string' || typeof v.at !== 'string') return null;
  return {
    state: v.state as AgentStateName,
    event: v.event,
    at: v.at,
    ...(typeof v.detail === 'string' ? { detail: v.detail } : {}),
    ...(typeof v.notification === 'string' ? { notification: v.notification } : {}),
    ...(typeof v.resetsAt === 'number' ? { resetsAt: v.resetsAt } : {}),
  };
}

/**
 * Records what the hook `payload` says about the agent of the session in `dir`; nothing when it
 * says nothing new. Resolves to the state written, or null.
 */
export async function recordAgentHook(
  dir: string,
  payload: unknown,
  now: Date,
): Promise<AgentState | null> {
  const previous = await readAgentState(dir);
  const next = agentStateFromHook(payload, now, previous);
  if (next === null || sameState(previous, next)) return null;
  await writeJsonAtomic(sessionDir(dir).agentState, next);
  return next;
}

function sameState(a: AgentState | null, b: AgentState): boolean {
  return (
    a !== null &&
    a.state === b.state &&
    a.event === b.event &&
    a.at === b.at &&
    a.detail === b.detail &&
    a.notification === b.notification &&
    a.resetsAt === b.resetsAt
  );
}
