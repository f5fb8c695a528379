/**
 * Why each waiting item is not running yet: the items ready now take the free slots in dispatch
 * order, as the daemon hands them out; the others say what holds them (pure).
 */
import { describe, expect, it } from 'vitest';
import { admission, type LimitPause } from '../../src/sessions/limit-pause.js';
import { waitReasonOf, withSlotWaits, type SlotFacts } from '../../src/status/wait-reasons.js';

const NOW = new Date('2026-11-26T10:00:00.000Z');
const item = (file: string, noun: string, wait: ReturnType<typeof waitReasonOf> | null = null) => ({
  file,
  noun,
  wait,
});
const facts = (over: Partial<SlotFacts> = {}): SlotFacts => ({
  maxAgents: 3,
  capOf: (noun) => (noun === 'fix' ? 1 : undefined),
  running: [],
  pause: null,
  admission: { kind: 'go' },
  ...over,
});
const waits = (items: ReturnType<typeof item>[], f: SlotFacts) =>
  withSlotWaits(items, f).map((i) => i.wait);

describe('withSlotWaits', () => {
  it('the first ready items take the free slots; then a noun at its Max, then the agent cap', () => {
    const items = [
      item('A.md', 'fix'),
      item('B.md', 'fix'),
      item('C.md', 'docs'),
      item('D.md', 'docs'),
      item('E.md', 'docs'),
    ];
    expect(waits(items, facts({ running: ['chores'] }))).toEqual([
      null,
      { kind: 'noun-max', noun: 'fix', max: 1, running: 1 },
      null,
      { kind: 'agents', max: 3, running: 3 },
      { kind: 'agents', max: 3, running: 3 },
    ]);
    // --max-agents 0: no cap.
    expect(waits(items, facts({ maxAgents: 0, running: ['chores'] })).at(-1)).toBeNull();
  });

  it('keeps the wait an item has from its file, and a file gets one claim at a time', () => {
    const later = waitReasonOf({ kind: 'not-before', until: NOW.getTime() + 60_000 });
    expect(later).toEqual({ kind: 'not-before', until: '2026-11-26T10:01:00.000Z' });
    expect(
      waits([item('A.md', 'docs', later), item('B.md', 'docs'), item('B.md', 'chores')], facts()),
    ).toEqual([later, null, { kind: 'claim', tag: '#claimed-docs' }]);
  });

  it('under a pause every ready item waits for it; once it ran out, the first goes as the probe', () => {
    const pause: LimitPause = {
      until: '2026-11-26T10:10:00.000Z',
      reason: 'usage limit',
      since: NOW.toISOString(),
    };
    const items = [item('A.md', 'docs'), item('B.md', 'docs')];
    const held = { kind: 'paused', until: pause.until, probe: null };
    expect(waits(items, facts({ pause, admission: admission(pause, NOW) }))).toEqual([held, held]);
    const ranOut = new Date('2026-11-26T10:11:00.000Z');
    expect(waits(items, facts({ pause, admission: admission(pause, ranOut) }))).toEqual([
      null,
      { kind: 'paused', until: null, probe: null },
    ]);
    const probing = { ...pause, probe: { file: '/p/P.md', noun: 'docs', since: pause.until } };
    expect(waits(items, facts({ pause: probing, admission: admission(probing, ranOut) }))).toEqual([
      { kind: 'paused', until: null, probe: '/p/P.md' },
      { kind: 'paused', until: null, probe: '/p/P.md' },
    ]);
  });
});
