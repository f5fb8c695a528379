/**
 * `.state.json`: the record of one agent session. One writer at a time: the daemon creates it
 * (status `starting`) before spawning, the wrapper (`engine run <skill> <file> --session`) owns it
 * while the agent runs, and the daemon writes it again only to mark a dead session `abandoned`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../files/write-json-atomic.js';

/** The session states, in order. */
export const SESSION_STATUSES = ['starting', 'running', 'exited', 'abandoned'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export interface TmuxTarget {
  socket: string | null;
  session: string;
  window: string | null;
  pane: string | null;
}

export interface SessionState {
  version: 1;
  status: SessionStatus;
  /** The wrapper process (`engine run <skill> <file> --session <dir>`), once it started. */
  pid: number | null;
  /** /proc/<pid>/stat field 22 and the boot id: with `pid`, they name one process unambiguously. */
  startTicks: string | null;
  bootId: string | null;
  host: string;
  /** The agent child of the wrapper, once started. */
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
  heartbeatMs: number;
  reason: string | null;
}

export const STATE_FILE = '.state.json';

export function statePath(sessionDir: string): string {
  return join(sessionDir, STATE_FILE);
}

export type StateRead =
  | { state: SessionState }
  | { missing: true }
  | { malformed: string }
  | { error: string };

/** Reads a state record; a missing or malformed record is a value, not an exception. */
export async function readSessionState(sessionDir: string): Promise<StateRead> {
  let raw: string;
  try {
    raw = await readFile(statePath(sessionDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { missing: true };
    return { error: `cannot read .state.json: ${(error as Error).message}` };
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

export function writeSessionState(sessionDir: string, state: SessionState): Promise<void> {
  return writeJsonAtomic(statePath(sessionDir), state);
}
