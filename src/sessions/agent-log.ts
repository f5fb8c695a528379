/**
 * `<session>/agent.log`: everything the agent wrote to its terminal, as the runner saw it (tmux:
 * `pipe-pane`, set before the agent starts; pty: the daemon appends what node-pty reads). Read by
 * `engine logs`.
 */
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../errors.js';
import { systemProbe } from '../process/process-identity.js';
import { judgeSession, judgeUnrecorded, type JudgeOptions } from './judge-session.js';
import { claimTime, SESSION_FILES, sessionDir } from './session-dir.js';
import { startTokenTime } from './session-markers.js';
import { readSessionState } from './session-state.js';

/** Largest piece read at once. */
const CHUNK_BYTES = 1024 * 1024;

/** How much of the end of agent.log is searched for a run's result line. */
const RESULT_TAIL_BYTES = 8 * 1024 * 1024;

export interface AgentLogOptions {
  /** Go on reading what is appended until the session has ended. */
  follow: boolean;
  /** How often a followed transcript is read again. */
  pollMs?: number;
  /**
   * How long the transcript must stay unchanged once the session ended: tmux writes the last
   * output of a pane through its pipe after the agent's exit was recorded.
   */
  settleMs?: number;
  /** How claims are judged: the project's settings (daemon-options.ts judgeOptionsOf). */
  judge: JudgeOptions;
  /** Whether the session has ended; by default, as the judge of a claim sees it. */
  ended?: () => Promise<boolean>;
}

/**
 * The transcript of the session in `dir`, piece by piece: what it holds now and, when following,
 * what is appended until the session has ended and the file has been quiet for `settleMs`.
 */
export async function* agentLogChunks(
  dir: string,
  {
    follow,
    judge,
    pollMs = 200,
    settleMs = 500,
    ended = () => sessionEnded(dir, judge),
  }: AgentLogOptions,
): AsyncGenerator<Buffer> {
  const path = sessionDir(dir).agentLog;
  let offset = 0;
  let quietSince: number | null = null;
  for (;;) {
    const chunk = await readFrom(path, offset);
    if (chunk === null && !follow) {
      throw new EngineError(`${dir} has no ${SESSION_FILES.agentLog}: no agent output was recorded there`);
    }
    if (chunk !== null && chunk.length > 0) {
      offset += chunk.length;
      quietSince = null;
      yield chunk;
      continue;
    }
    if (!follow) return;
    if (await ended()) {
      quietSince ??= Date.now();
      if (Date.now() - quietSince >= settleMs) return;
    }
    await sleep(pollMs);
  }
}

/** Up to `length` bytes from `offset`; null when the file does not exist. */
async function readFrom(
  path: string,
  offset: number,
  length = CHUNK_BYTES,
): Promise<Buffer | null> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new EngineError(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** True once neither the session's wrapper nor its agent runs (or it never will). */
export async function sessionEnded(dir: string, options: JudgeOptions): Promise<boolean> {
  const now = new Date();
  const read = await readSessionState(dir);
  if ('missing' in read) {
    // Claimed, and its record not written yet: it may still start.
    const claimed = claimTime(dir);
    return claimed === null || !judgeUnrecorded(claimed, now, options).alive;
  }
  if (!('state' in read)) return true;
  const records = { startTokenAt: await startTokenTime(dir) };
  return !judgeSession(read.state, records, now, options, systemProbe).alive;
}

/**
 * The last `maxBytes` of a session's agent.log, from the start of a line when cut; null when it
 * has none.
 */
export async function agentLogEnd(dir: string, maxBytes: number): Promise<Buffer | null> {
  const path = sessionDir(dir).agentLog;
  const size = await stat(path).then(
    (info) => info.size,
    () => null,
  );
  if (size === null) return null;
  const start = Math.max(0, size - maxBytes);
  const chunk = await readFrom(path, start, size - start);
  if (chunk === null || start === 0) return chunk;
  return chunk.subarray(chunk.indexOf(0x0a) + 1);
}

/**
 * A line of a transcript without the terminal's control sequences (ESC [ ...) a program's
 * output carries through its terminal; JSON escapes ESC inside strings, so a raw one is never
 * data.
 */
export function withoutControlSequences(line: string): string {
  return line.replace(CONTROL_SEQUENCE, '');
}

// eslint-disable-next-line no-control-regex -- the terminal's escape sequences are what it removes
const CONTROL_SEQUENCE = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** The end of a session's agent.log as text; null when unreadable. */
export async function agentLogTail(dir: string): Promise<string | null> {
  return (await readAgentLogTail(dir))?.text ?? null;
}

/** The end of a session's agent.log with the log's size; null when unreadable. */
export function readAgentLogTail(dir: string): Promise<{ text: string; size: number } | null> {
  return readTail(sessionDir(dir).agentLog);
}

/** The last RESULT_TAIL_BYTES of a file as text, with its size; null when it cannot be read. */
async function readTail(path: string): Promise<{ text: string; size: number } | null> {
  try {
    const { size } = await stat(path);
    const start = Math.max(0, size - RESULT_TAIL_BYTES);
    const chunk = await readFrom(path, start, size - start);
    return chunk === null ? null : { text: chunk.toString('utf8'), size };
  } catch {
    // An unreadable log has no result: the exit is recorded without one.
    return null;
  }
}
