/** Whether a daemon runs on the root, judged from its lock as the lock itself judges it. */
import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/sessions/event-log.js';
import { daemonPresence } from '../../src/status/daemon-presence.js';
import { BOOT, HOST, fakeProbe, statLine } from '../process/fake-probe.js';

const holder = { pid: 4242, startTicks: '777', bootId: BOOT, host: HOST };
const started = (pid: number, time: string): EngineEvent => ({
  event: 'daemon-started',
  pid,
  host: HOST,
  time,
});
const EVENTS = [started(4242, '2026-11-26T08:00:00.000Z'), started(99, '2026-11-26T09:00:00.000Z')];

describe('daemonPresence', () => {
  it('a live holder runs, since its own daemon-started', () => {
    const probe = fakeProbe({ stats: { 4242: statLine(4242, 'node', 'S', '777') } });
    expect(daemonPresence(holder, EVENTS, probe)).toEqual({
      state: 'running',
      pid: 4242,
      host: HOST,
      since: '2026-11-26T08:00:00.000Z',
      stalePid: null,
    });
  });

  it('no lock, or a holder gone or its pid reused: none runs', () => {
    expect(daemonPresence(null, EVENTS, fakeProbe()).state).toBe('none');
    expect(daemonPresence(holder, EVENTS, fakeProbe())).toMatchObject({
      state: 'none',
      stalePid: 4242,
    });
    const reused = fakeProbe({ stats: { 4242: statLine(4242, 'node', 'S', '888') } });
    expect(daemonPresence(holder, EVENTS, reused)).toMatchObject({ state: 'none', stalePid: 4242 });
  });

  it('a holder on another host is taken as running, as the lock takes it', () => {
    const there = { ...holder, host: 'elsewhere' };
    expect(daemonPresence(there, EVENTS, fakeProbe())).toMatchObject({
      state: 'other-host',
      host: 'elsewhere',
      since: null,
    });
  });
});
