/**
 * How `engine status` and the board show an agent's own state (src/agents/agent-state.ts). A wait for a
 * human is written in capitals, with what it waits for and how to answer: it is the one state
 * someone must act on, listed first under "Needs you".
 */
import type { AgentState } from '../agents/agent-state.js';
import { relativeTime } from './relative-time.js';

export function agentStateText(state: AgentState | null, now: Date): string {
  if (state === null) return '';
  const detail = state.detail === undefined ? '' : `: ${state.detail}`;
  const since = relativeTime(state.at, now);
  if (state.state === 'waiting')
    return `AGENT WAITING FOR INPUT since ${since}${detail} (engine attach to answer)`;
  return `agent ${state.state} since ${since} (${state.event}${detail})`;
}
