import { describe, expect, it } from 'vitest';
import { isHeartbeatStale } from '../../src/process/heartbeat.js';

const now = new Date('2026-11-22T12:00:00.000Z');

describe('isHeartbeatStale', () => {
  it('counts a missing heartbeat as stale', () => {
    expect(isHeartbeatStale(undefined, now, 10_000)).toBe(true);
    expect(isHeartbeatStale(null, now, 10_000)).toBe(true);
  });

  it('counts an unparsable or zoneless heartbeat as stale', () => {
    for (const text of [
      '',
      'yesterday',
      '1',
      '2026-11-22',
      '2026-11-22T11:59:59',
      '2026-13-45T99:99:99Z',
      'Sun, 22 Nov 2026 11:59:59 GMT',
    ]) {
      expect(isHeartbeatStale(text, now, 10_000), text).toBe(true);
    }
  });

  it('is fresh within the window and stale after it', () => {
    expect(isHeartbeatStale('2026-11-22T11:59:55.000Z', now, 10_000)).toBe(false);
    expect(isHeartbeatStale('2026-11-22T11:59:50.000Z', now, 10_000)).toBe(false);
    expect(isHeartbeatStale('2026-11-22T11:59:49.999Z', now, 10_000)).toBe(true);
    expect(isHeartbeatStale(' 2026-11-22T11:59:55Z\n', now, 10_000)).toBe(false);
  });

  it('honours zone offsets', () => {
    expect(isHeartbeatStale('2026-11-22T13:59:55+02:00', now, 10_000)).toBe(false);
    expect(isHeartbeatStale('2026-11-22T09:59:55+02:00', now, 10_000)).toBe(true);
  });

  it('does not call a heartbeat from the future stale (clock skew)', () => {
    expect(isHeartbeatStale('2026-11-22T12:05:00.000Z', now, 10_000)).toBe(false);
  });

  it('rejects a nonsensical window or clock instead of answering "fresh"', () => {
    expect(() => isHeartbeatStale(now.toISOString(), now, Number.NaN)).toThrow(RangeError);
    expect(() => isHeartbeatStale(now.toISOString(), now, -1)).toThrow(RangeError);
    expect(() => isHeartbeatStale(now.toISOString(), new Date(Number.NaN), 1)).toThrow(RangeError);
  });
});
