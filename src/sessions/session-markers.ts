/**
 * Marker files in a session directory, each created by one party:
 * `.started` (who may start the agent), `.done-event` (who records the item's `done` event),
 * `.done` (the item was seen done and its event recorded; the session is over; its mtime is when),
 * and one per step of closing the agent (close-finished.ts), each made right before the step is
 * taken: `.close-asked` (asked to exit), `.close-term` (sent SIGTERM), `.close-kill` (sent
 * SIGKILL); their mtimes are when. `.close-requested`: a human asked to close the finished agent
 * now (`engine close`); its mtime, the first ask's time, is when its close is due. `.superseded`:
 * the daemon found the session's item claimed by another lease (git claims: another host took it
 * over while no daemon here followed the session), so its work can no longer count; its close is
 * due then, whatever the agent.
 */
import { open, stat, utimes } from 'node:fs/promises';
import { sessionDir, type SessionFile } from './session-dir.js';

const CLOSE_MARKS = {
  ask: 'closeAsked',
  SIGTERM: 'closeTerm',
  SIGKILL: 'closeKill',
} as const satisfies Record<string, SessionFile>;
/** A step of closing an agent: the ask to exit, or a signal. */
export type CloseMark = keyof typeof CLOSE_MARKS;

/** Creates the mark once (O_EXCL): true for the one caller that created it. */
async function createOnce(dir: string, name: SessionFile): Promise<boolean> {
  try {
    await (await open(sessionDir(dir)[name], 'wx')).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * The right to start a session's agent, taken once (O_EXCL): by the wrapper when it starts, or
 * by the daemon when a spawn failed, so an agent can never start on a session the daemon gave up.
 */
export function takeStartToken(dir: string): Promise<boolean> {
  return createOnce(dir, 'startToken');
}

/**
 * The duty to record the item's `done` event, taken once (O_EXCL) by whichever observer first
 * sees the item done; `.done` follows once the event is recorded.
 */
export function takeDoneEvent(dir: string): Promise<boolean> {
  return createOnce(dir, 'doneEvent');
}

/** Whether the duty to record the `done` event was taken (see takeDoneEvent). */
export async function isDoneEventTaken(dir: string): Promise<boolean> {
  return (await markTime(dir, 'doneEvent')) !== null;
}

export async function markSessionDone(dir: string): Promise<void> {
  await (await open(sessionDir(dir).done, 'a').catch(() => null))?.close();
}

/** When the item was first seen done (ms since the epoch), or null when it was not. */
export async function doneMarkTime(dir: string): Promise<number | null> {
  return markTime(dir, 'done');
}

/**
 * Records that step `mark` of closing the agent is taken: true for the one caller that created the
 * mark (O_EXCL), or that renewed one made before `staleBefore` (for an earlier reason, see
 * close-finished.ts), so two followers of a session never both take it, nor does a restarted
 * daemon take it again. False when the mark is newer (another caller took the step) or gone.
 */
export async function takeCloseMark(
  dir: string,
  mark: CloseMark,
  staleBefore: number,
): Promise<boolean> {
  const path = sessionDir(dir)[CLOSE_MARKS[mark]];
  try {
    await (await open(path, 'wx')).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const taken = await markTime(dir, CLOSE_MARKS[mark]);
  if (taken === null || taken >= staleBefore) return false;
  const now = new Date();
  await utimes(path, now, now);
  return true;
}

/**
 * Records that a human cancelled the session (`engine cancel`), once its claim was handed back and
 * before its agent is signalled: a stale save that puts `#delegated-X` back meanwhile is a new
 * approval, never a claim to restore.
 */
export function markCancelled(dir: string): Promise<void> {
  return touchMark(dir, 'cancelled');
}

export async function isCancelled(dir: string): Promise<boolean> {
  return (await markTime(dir, 'cancelled')) !== null;
}

/** Records that a human asked to close the agent now; a second ask keeps the first one's time. */
export function requestClose(dir: string): Promise<void> {
  return touchMark(dir, 'closeRequested');
}

/**
 * Records that the session's item is another lease's now, so its agent is closed; a second mark
 * keeps the first one's time.
 */
export function markSuperseded(dir: string): Promise<void> {
  return touchMark(dir, 'superseded');
}

/** When the session was found superseded (ms since the epoch), or null when it was not. */
export function supersededTime(dir: string): Promise<number | null> {
  return markTime(dir, 'superseded');
}

/** Creates a mark, or keeps one there as it is (its mtime says when it was first made). */
async function touchMark(dir: string, name: SessionFile): Promise<void> {
  await (await open(sessionDir(dir)[name], 'a')).close();
}

/** When a human asked to close the agent now (ms since the epoch), or null when nobody did. */
export function closeRequestTime(dir: string): Promise<number | null> {
  return markTime(dir, 'closeRequested');
}

/** When step `mark` of closing the agent was taken (ms since the epoch), or null when it was not. */
export async function closeMarkTime(dir: string, mark: CloseMark): Promise<number | null> {
  return markTime(dir, CLOSE_MARKS[mark]);
}

function markTime(dir: string, name: SessionFile): Promise<number | null> {
  return stat(sessionDir(dir)[name]).then(
    (info) => info.mtimeMs,
    () => null,
  );
}

export async function isSessionDone(dir: string): Promise<boolean> {
  return stat(sessionDir(dir).done).then(
    () => true,
    () => false,
  );
}

/** When the start token was taken (ms since the epoch), or null when it was not. */
export async function startTokenTime(dir: string): Promise<number | null> {
  return markTime(dir, 'startToken');
}
