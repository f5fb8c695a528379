/**
 * What finished recently, from the event log: each item once (by its last session), most recent
 * first, and a cut list says how many more.
 */
import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/sessions/event-log.js';
import { doneItems, itemKey } from '../../src/status/done-items.js';

let clock = Date.parse('2026-11-26T10:00:00.000Z');
function ev(event: EngineEvent['event'], file: string, session: string, extra = {}): EngineEvent {
  clock += 1000;
  return { event, file, noun: 'fix', session, time: new Date(clock).toISOString(), ...extra };
}
const names = (events: EngineEvent[], current = new Set<string>()) =>
  doneItems(events, 0, current).items.map((e) => `${e.file} ${e.event}`);

describe('doneItems', () => {
  it('lists an item retried and then done once, by its last session', () => {
    const events = [
      ev('claimed', 'A.md', 's1'),
      ev('exited', 'A.md', 's1', { exitCode: 1 }),
      ev('requeued', 'A.md', 's1'),
      ev('claimed', 'A.md', 's2'),
      ev('done', 'A.md', 's2'),
      ev('exited', 'A.md', 's2', { exitCode: 0 }),
    ];
    expect(names(events)).toEqual(['A.md done']);
  });

  it('most recent first; an item whose last session was requeued, or that is claimed now, is not done', () => {
    const events = [
      ev('done', 'A.md', 's1'),
      ev('requeued', 'B.md', 's2'),
      ev('exited', 'C.md', 's3', { reason: 'the request file was deleted' }),
      ev('done', 'D.md', 's4'),
      ev('done', 'E.md', 's5'),
    ];
    expect(names(events, new Set([itemKey('E.md', 'fix')]))).toEqual([
      'D.md done',
      'C.md exited',
      'A.md done',
    ]);
  });

  it('cuts the list and says how many more; leaves out what ended before `after`', () => {
    const events = Array.from({ length: 25 }, (_, i) => ev('done', `F${i}.md`, `s${i}`));
    const cut = doneItems(events, Date.parse(events[2]!.time), new Set(), 20);
    expect(cut.items).toHaveLength(20);
    expect(cut.items[0]?.file).toBe('F24.md');
    expect(cut.more).toBe(3);
  });
});
