/**
 * Marker files in a session directory, each created by one party and never rewritten:
 * `.started` (who may start the agent), `.done-event` (who records the item's `done` event),
 * `.done` (the item was seen done and its event recorded; the session is over; its mtime is when)
 * and `.close-asked` (the finished agent was asked to exit; its mtime is when).
 */
import { open, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';

const START_TOKEN = '.started';
const DONE_EVENT_MARK = '.done-event';
const DONE_MARK = '.done';
const CLOSE_ASKED_MARK = '.close-asked';

/** Creates the mark once (O_EXCL): true for the one caller that created it. */
async function createOnce(dir: string, name: string): Promise<boolean> {
  try {
    await (await open(join(dir, name), 'wx')).close();
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
  return createOnce(dir, START_TOKEN);
}

/**
 * The duty to record the item's `done` event, taken once (O_EXCL) by whichever observer first
 * sees the item done; `.done` follows once the event is recorded.
 */
export function takeDoneEvent(dir: string): Promise<boolean> {
  return createOnce(dir, DONE_EVENT_MARK);
}

/** Whether the duty to record the `done` event was taken (see takeDoneEvent). */
export async function isDoneEventTaken(dir: string): Promise<boolean> {
  return (await markTime(dir, DONE_EVENT_MARK)) !== null;
}

export async function markSessionDone(dir: string): Promise<void> {
  await (await open(join(dir, DONE_MARK), 'a').catch(() => null))?.close();
}

/** When the item was first seen done (ms since the epoch), or null when it was not. */
export async function doneMarkTime(dir: string): Promise<number | null> {
  return markTime(dir, DONE_MARK);
}

/**
 * Records that the finished agent is asked to exit, once (O_EXCL): true for the one caller that
 * created the mark, so two followers of a session never both type into its terminal.
 */
export function markCloseAsked(dir: string): Promise<boolean> {
  return createOnce(dir, CLOSE_ASKED_MARK);
}

/**
 * Makes an ask mark older than `staleBefore` say now: a new ask, for a later reason than the
 * first. False when the mark is newer (another caller asked already) or gone.
 */
export async function renewCloseAsked(dir: string, staleBefore: number): Promise<boolean> {
  const asked = await closeAskedTime(dir);
  if (asked === null || asked >= staleBefore) return false;
  const now = new Date();
  await utimes(join(dir, CLOSE_ASKED_MARK), now, now);
  return true;
}

/** When the finished agent was asked to exit (ms since the epoch), or null when it was not. */
export async function closeAskedTime(dir: string): Promise<number | null> {
  return markTime(dir, CLOSE_ASKED_MARK);
}

function markTime(dir: string, name: string): Promise<number | null> {
  return stat(join(dir, name)).then(
    (info) => info.mtimeMs,
    () => null,
  );
}

export async function isSessionDone(dir: string): Promise<boolean> {
  return stat(join(dir, DONE_MARK)).then(
    () => true,
    () => false,
  );
}

/** When the start token was taken (ms since the epoch), or null when it was not. */
export async function startTokenTime(dir: string): Promise<number | null> {
  return markTime(dir, START_TOKEN);
}
