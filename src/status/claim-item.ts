/**
 * A claim as `engine status` shows it: its session, whether its agent lives (judged as the
 * daemon judges it: sessions/judge-session.ts), its attempt and age, and the agent's own state.
 */
import type { ProcProbe } from '../process/process-identity.js';
import { readAgentState, type AgentState } from '../agents/agent-state.js';
import {
  judgeSession,
  judgeUnrecorded,
  type JudgeOptions,
  type SessionVerdict,
} from '../sessions/judge-session.js';
import { claimTime, resolveSessionRef } from '../sessions/session-dir.js';
import { startTokenTime } from '../sessions/session-markers.js';
import { readSessionState } from '../sessions/session-state.js';
import { sessionReference } from '../tags/lifecycle-edits.js';

export interface ClaimItem {
  file: string;
  noun: string;
  session: string | null;
  status: string | null;
  /** Which attempt at the item this session is (1: the first). */
  attempt: number | null;
  pid: number | null;
  alive: boolean;
  liveness: string;
  pane: string | null;
  startedAt: string | null;
  ageSeconds: number | null;
  lastHeartbeat: string | null;
  /** The agent's Claude Code session id: `claude --resume <id>` from the root reopens it. */
  agentSessionId: string | null;
  /** What the agent's own hooks last said (src/sessions/agent-state.ts); null: nothing yet. */
  agentState: AgentState | null;
  /** With git claims: the host whose lease runs it, when not this one's (hosts-claims.ts). */
  held?: string;
}

export async function describeClaim(
  root: string,
  { file, noun, text, mtime }: { file: string; noun: string; text: string; mtime: number },
  { now, options, probe }: { now: Date; options: JudgeOptions; probe: ProcProbe },
): Promise<ClaimItem> {
  const session = sessionReference(text);
  const base: ClaimItem = {
    file,
    noun,
    session,
    status: null,
    attempt: null,
    pid: null,
    alive: false,
    liveness: session ? 'no session record' : 'claimed without a Session line',
    pane: null,
    startedAt: null,
    ageSeconds: null,
    lastHeartbeat: null,
    agentSessionId: null,
    agentState: null,
  };
  const dir = session ? resolveSessionRef(root, session) : null;
  if (!session || !dir) return base;
  const read = await readSessionState(dir);
  if ('missing' in read) {
    return { ...base, ...shown(judgeUnrecorded(claimTime(session) ?? mtime, now, options)) };
  }
  if (!('state' in read)) {
    return { ...base, liveness: 'malformed' in read ? read.malformed : read.error };
  }
  const s = read.state;
  const item: ClaimItem = {
    ...base,
    status: s.status,
    attempt: s.attempt,
    pid: s.pid,
    pane: s.tmux?.pane ?? null,
    startedAt: s.startedAt,
    ageSeconds: Math.round((now.getTime() - Date.parse(s.startedAt)) / 1000),
    lastHeartbeat: s.lastHeartbeat,
    agentSessionId: s.agentSessionId ?? null,
    agentState: await readAgentState(dir),
  };
  const records = { startTokenAt: await startTokenTime(dir) };
  return { ...item, ...shown(judgeSession(s, records, now, options, probe)) };
}

function shown(verdict: SessionVerdict): Pick<ClaimItem, 'alive' | 'liveness'> {
  return verdict.alive
    ? { alive: true, liveness: verdict.detail }
    : { alive: false, liveness: verdict.reason };
}
