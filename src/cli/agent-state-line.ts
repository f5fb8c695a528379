/**
 * How `engine status` shows an agent's own state (src/agents/agent-state.ts). A wait for a
 * human is written in capitals, with what it waits for and how to answer: it is the one state
 * someone must act on.
 */
import type { AgentState } from '../agents/agent-state.js';

export function agentStateText(state: AgentState | null): string {
  if (state === null) return '';
  const detail = state.detail === undefined ? '' : `: ${state.detail}`;
  if (state.state === 'waiting')
    return `  AGENT WAITING FOR INPUT since ${state.at}${detail} (engine attach to answer)`;
  return `  agent ${state.state} since ${state.at} (${state.event}${detail})`;
}
