/**
 * `<session>/agent-state.json`: what the agent's own hooks last reported (working, waiting,
 * idle, ended, or limited by a usage limit). Written by the hook subcommand only; this is its
 * one reader. A missing or malformed file is no state: the reader never guesses.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const AGENT_STATE_FILE = 'agent-state.json';

export const AGENT_STATES = ['working', 'waiting', 'idle', 'ended', 'limited'] as const;
export type AgentStateName = (typeof AGENT_STATES)[number];

export interface AgentState {
  state: AgentStateName;
  /** The Claude Code hook event that reported it. */
  event: string;
  at: string;
  detail?: string;
  /** When a usage limit resets, in epoch seconds. */
  resetsAt?: number;
}

/** The agent state the session's hooks recorded, or null when there is none (or it is unreadable). */
export async function readAgentState(dir: string): Promise<AgentState | null> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(join(dir, AGENT_STATE_FILE), 'utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!(AGENT_STATES as readonly unknown[]).includes(v.state)) return null;
  if (typeof v.event !== 'string' || typeof v.at !== 'string') return null;
  return {
    state: v.state as AgentStateName,
    event: v.event,
    at: v.at,
    ...(typeof v.detail === 'string' ? { detail: v.detail } : {}),
    ...(typeof v.resetsAt === 'number' && Number.isFinite(v.resetsAt)
      ? { resetsAt: v.resetsAt }
      : {}),
  };
}
