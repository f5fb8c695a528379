/**
 * A finished item's ending event, with what its session recorded: the agent's session id and a
 * print run's result (cost, turns, ...), once its exit was recorded.
 */
import type { EngineEvent } from '../sessions/event-log.js';
import type { PrintResult } from '../sessions/session-state.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { readStateRecord } from '../sessions/session-state.js';

export type DoneItem = EngineEvent & {
  agentSessionId: string | null;
  result: PrintResult | null;
};

export async function recordedOf(root: string, event: EngineEvent): Promise<DoneItem> {
  const dir = event.session === undefined ? null : resolveSessionRef(root, event.session);
  const read = dir === null ? null : await readStateRecord(dir);
  if (read === null || !('state' in read)) return { ...event, agentSessionId: null, result: null };
  const { agentSessionId, result } = read.state;
  return { ...event, agentSessionId: agentSessionId ?? null, result: result ?? null };
}
