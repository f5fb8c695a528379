/**
 * `.state.json`: the record of one agent session, written only by the daemon, through
 * `transitionSession` (src/sessions/session-status.ts): created (status `starting`) before the
 * launch, completed once the agent exited (`exited`), or marked `abandoned` when the session is
 * dead. While the agent runs, the wrapper writes its own small files beside it
 * (src/sessions/wrapper-records.ts); `readSessionState` merges them into one view.
 */
import { readFile } from 'node:fs/promises';
import { SESSION_FILES, sessionDir } from './session-dir.js';
import { readWrapperRecords } from './wrapper-records.js';

/** The session states, in order. */
export const SESSION_STATUSES = ['starting', 'running', 'exited', 'abandoned'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export interface TmuxTarget {
  socket: string | null;
  session: string;
  window: string | null;
  pane: string | null;
}

/** A `claude-print` run's outcome, as its stream-json result line gave it (agents/print-result.ts). */
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

export interface SessionState {
  version: 1;
  status: SessionStatus;
  /** The wrapper process (the sh script of src/sessions/wrapper-script.ts), once it started. */
  pid: number | null;
  /** /proc/<pid>/stat field 22 and the boot id: with `pid`, they name one process unambiguously. */
  startTicks: string | null;
  bootId: string | null;
  host: string;
  /** The agent, once started (a child of the wrapper). */
  agentPid: number | null;
  agentStartTicks: string | null;
  skill: string;
  noun: string;
  tag: string;
  /** Absolute path of the request file. */
  requestFile: string;
  root: string;
  /** The session directory, relative to root, as written in the request's Session line. */
  sessionRef: string;
  exitCode: number | null;
  startedAt: string;
  lastHeartbeat: string | null;
  endedAt: string | null;
  attempt: number;
  priorSession: string | null;
  runner: 'tmux' | 'pty';
  tmux: TmuxTarget | null;
  /** The agent command, already split and filled in by the daemon. */
  agentArgv: string[];
  /**
   * The Claude Code session id the agent was started with (`--session-id`, a fresh UUID per
   * claim), so `claude --resume <id>` reopens its conversation; null for a custom agent whose
   * template has no `{agent_session}`. Absent from records written before it existed.
   */
  agentSessionId?: string | null;
  /**
   * The agent profile it was started with (AGENT_KINDS, src/agents/agent-profile.ts). Absent from
   * records written before it existed.
   */
  agent?: string;
  /**
   * A `claude-print` run's outcome, from the last `result` line of its agent.log, copied in when
   * its exit is recorded; null when it wrote none (killed, or cut short). Absent otherwise.
   */
  result?: PrintResult | null;
  /**
   * Resume (src/resume/): the directory the agent ran in, the digest of the request text it was
   * asked (tags/request-digest.ts), and the prior agent session it continued (`--resume`), null when it
   * started fresh. Absent from records written before they existed.
   */
  cwd?: string;
  requestDigest?: string;
  resumedFrom?: string | null;
  /** The item's git worktree (`--worktree`, src/worktrees/), null without one. */
  worktree?: { path: string; branch: string } | null;
  heartbeatMs: number;
  reason: string | null;
}

export function statePath(dir: string): string {
  return sessionDir(dir).state;
}

export type StateRead =
  | { state: SessionState }
  | { missing: true }
  | { malformed: string }
  | { error: string };

/**
 * The session as it is now: `.state.json` with what the wrapper recorded since (`running` once
 * its identity is there, the agent's identity, `exited` with the exit code, the last heartbeat).
 * A record the daemon already completed (`exited`, `abandoned`) is returned as it is.
 */
export async function readSessionState(sessionDir: string): Promise<StateRead> {
  const read = await readStateRecord(sessionDir);
  if (!('state' in read)) return read;
  const state = read.state;
  if (state.status !== 'starting' && state.status !== 'running') return read;
  const records = await readWrapperRecords(sessionDir);
  const merged: SessionState = { ...state };
  const { wrapper, agent, exit, heartbeat } = records;
  if (wrapper) {
    merged.status = 'running';
    merged.pid = wrapper.pid;
    merged.startTicks = wrapper.startTicks;
    merged.bootId = wrapper.bootId;
    merged.host = wrapper.host;
    if (merged.tmux) merged.tmux = { ...merged.tmux, pane: wrapper.pane ?? merged.tmux.pane };
  }
  if (agent) {
    merged.agentPid = agent.pid;
    merged.agentStartTicks = agent.startTicks;
  }
  if (heartbeat) merged.lastHeartbeat = heartbeat;
  if (exit) {
    merged.status = 'exited';
    merged.exitCode = exit.code;
    merged.endedAt = exit.at;
  }
  return { state: merged };
}

/** `.state.json` alone, as the daemon last wrote it; missing or malformed is a value. */
export async function readStateRecord(sessionDir: string): Promise<StateRead> {
  let raw: string;
  try {
    raw = await readFile(statePath(sessionDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { missing: true };
    return { error: `cannot read ${SESSION_FILES.state}: ${(error as Error).message}` };
  }
  try {
    const value = JSON.parse(raw) as Partial<SessionState>;
    if (
      typeof value !== 'object' ||
      value === null ||
      !SESSION_STATUSES.includes(value.status as SessionStatus) ||
      typeof value.noun !== 'string'
    ) {
      return { malformed: 'not a session record' };
    }
    return { state: value as SessionState };
  } catch (error) {
    return { malformed: `invalid JSON: ${(error as Error).message}` };
  }
}
