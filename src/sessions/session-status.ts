/**
 * The session state machine: which status `.state.json` may go to from which, and
 * `transitionSession`, the one writer of `.state.json` and of the event that goes with each change
 * (like concurrently's `changeState()`). The statuses themselves are part of the record's schema
 * (SESSION_STATUSES in session-state.ts).
 */
import { writeJsonAtomic } from '../files/write-json-atomic.js';
import type { EventInput, EventName } from './event-log.js';
import {
  readStateRecord,
  statePath,
  type SessionState,
  type SessionStatus,
} from './session-state.js';

/** A session that may still have a wrapper or an agent to follow. */
export function isOpen(status: SessionStatus): boolean {
  return status === 'starting' || status === 'running';
}

/**
 * The statuses each status may go to; `none` is a session without a record yet. A status may
 * always stay as it is, for a patch (the request file moved, identities copied in). `exited` may
 * still become `abandoned`: a claim whose agent exited without marking done is requeued.
 */
export const SESSION_TRANSITIONS: Readonly<Record<SessionStatus | 'none', readonly SessionStatus[]>> =
  {
    none: ['starting'],
    starting: ['starting', 'running', 'exited', 'abandoned'],
    running: ['running', 'exited', 'abandoned'],
    exited: ['exited', 'abandoned'],
    abandoned: ['abandoned'],
  };

/** Where the events of a transition go: the daemon's `recordEvent`. */
export type EventSink = (event: EventInput) => Promise<void>;

/** An event of a transition; its file, noun and session are taken from the record written. */
export type SessionEvent = { event: EventName } & Omit<EventInput, 'event'>;

export interface TransitionOptions {
  events: EventSink;
  /** Appended once the record is written, never when the transition is refused. */
  event?: SessionEvent;
  /** The record must still name this request file (it may have moved meanwhile). */
  requestFile?: string;
}

/** Updates in progress, by session directory. */
const updating = new Map<string, Promise<unknown>>();

/**
 * Moves a session's record from `from` (a status it must be in now; null: no record yet) to `to`
 * (`unchanged`: the status it is in), with `patch` over the record as written, and appends
 * `options.event`. One transition at a time per session in this process (the daemon, the
 * record's only writer). Resolves to the record written, or null when the record is no longer in
 * `from` (or names another request file): then it writes nothing and records nothing. A
 * transition the machine does not allow is a bug: it throws.
 */
export function transitionSession(
  dir: string,
  from: null,
  to: 'starting',
  patch: SessionState,
  options: TransitionOptions,
): Promise<SessionState | null>;
export function transitionSession(
  dir: string,
  from: SessionStatus | readonly SessionStatus[],
  to: SessionStatus | 'unchanged',
  patch: Partial<SessionState>,
  options: TransitionOptions,
): Promise<SessionState | null>;
export function transitionSession(
  dir: string,
  from: SessionStatus | readonly SessionStatus[] | null,
  to: SessionStatus | 'unchanged',
  patch: Partial<SessionState>,
  options: TransitionOptions,
): Promise<SessionState | null> {
  const sources: readonly (SessionStatus | 'none')[] =
    from === null ? ['none'] : typeof from === 'string' ? [from] : from;
  for (const source of sources) {
    if (to !== 'unchanged' && !SESSION_TRANSITIONS[source].includes(to)) {
      throw new Error(`a session cannot go from ${source} to ${to}`);
    }
  }
  const run = (updating.get(dir) ?? Promise.resolve()).then(async () => {
    const read = await readStateRecord(dir);
    let next: SessionState;
    if ('state' in read) {
      const current = read.state;
      if (!sources.includes(current.status)) return null;
      if (options.requestFile !== undefined && current.requestFile !== options.requestFile) {
        return null;
      }
      next = { ...current, ...patch, status: to === 'unchanged' ? current.status : to };
    } else if ('missing' in read && sources.includes('none') && to !== 'unchanged') {
      next = { ...(patch as SessionState), status: to };
    } else {
      return null;
    }
    await writeJsonAtomic(statePath(dir), next);
    if (options.event) {
      await options.events({
        file: next.requestFile,
        noun: next.noun,
        session: next.sessionRef,
        ...options.event,
      });
    }
    return next;
  });
  const settled = run.catch(() => undefined);
  updating.set(dir, settled);
  void settled.then(() => {
    if (updating.get(dir) === settled) updating.delete(dir);
  });
  return run;
}
