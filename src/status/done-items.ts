/**
 * What finished recently, each item once, from the event log: pure. The log holds one ending per
 * session (`done`, else `requeued`, else `exited`), and an item that was retried has a session per
 * attempt: read per session, an item retried and then done was listed twice (its first attempt's
 * `requeued`, its last one's `done`). Read per item, only its last session counts; an item whose
 * last session was requeued is not finished (it waits, or needs you, and is listed there).
 */
import type { EngineEvent } from '../sessions/event-log.js';

/** How a session ended, most telling first: an agent that exited is done, or was requeued. */
const ENDINGS = ['done', 'requeued', 'exited'];

/** At most this many finished items are listed; the rest are counted. */
export const DONE_SHOWN = 20;

export interface Cut<T> {
  items: T[];
  /** How many more there were. */
  more: number;
}

/**
 * One event per finished session: its `done` or `requeued`, else its `exited` (a session whose
 * claim ended otherwise, a request deleted under it). In the order the sessions ended.
 */
export function finishedOnce(events: readonly EngineEvent[]): EngineEvent[] {
  const bySession = new Map<string, EngineEvent>();
  events.forEach((event, i) => {
    const rank = ENDINGS.indexOf(event.event);
    if (rank === -1) return;
    const key = event.session ?? `#${i}`;
    const kept = bySession.get(key);
    if (kept && ENDINGS.indexOf(kept.event) <= rank) return;
    bySession.delete(key);
    bySession.set(key, event);
  });
  return [...bySession.values()];
}

/**
 * The items that finished since `after` (ISO times compared as instants), each once by its last
 * session, most recent first, at most `shown`. `current`: items (`file\0noun`) claimed now, which
 * have not finished whatever their earlier sessions did.
 */
export function doneItems(
  events: readonly EngineEvent[],
  after: number,
  current: ReadonlySet<string>,
  shown = DONE_SHOWN,
): Cut<EngineEvent> {
  const byItem = new Map<string, EngineEvent>();
  for (const event of finishedOnce(events)) {
    const key = itemKey(event.file ?? '', event.noun ?? '');
    byItem.delete(key);
    byItem.set(key, event);
  }
  const done = [...byItem.entries()]
    .filter(([key, e]) => e.event !== 'requeued' && !current.has(key))
    .map(([, e]) => e)
    .filter((e) => Date.parse(e.time) >= after)
    .reverse();
  return { items: done.slice(0, shown), more: Math.max(0, done.length - shown) };
}

/** The key of one item: its file and noun. */
export function itemKey(file: string, noun: string): string {
  return `${file}\0${noun}`;
}
