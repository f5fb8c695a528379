import { describe, expect, it } from 'vitest';
import type { SeenClaim } from '../../src/claims/claim-refs.js';
import { needsForce, viewOf } from '../../src/claims/claims-view.js';
import type { LeaseRecord } from '../../src/claims/lease.js';
import { prunable } from '../../src/claims/prune-claims.js';

const NOW = 1_800_000_000_000;
const DAY = 24 * 3600_000;

function claim(item: string, state: LeaseRecord['state'] | null, renewedAt: number): SeenClaim {
  const record: LeaseRecord | null =
    state === null
      ? null
      : {
          item,
          file: `sessions/${item}.md`,
          noun: 'fix',
          holder: { host: 'h', instance: 'i', boot: 'b' },
          attempt: 2,
          leaseMs: 60_000,
          renewedAt,
          state,
          nonce: '00',
          version: 1,
        };
  return { item, commit: `c-${item}`, record };
}

describe('a claim as a person reads it', () => {
  it("gives the renewal's age by the record's clock, and unreadable records as such", () => {
    expect(viewOf(claim('a', 'held', NOW - 5000), NOW)).toMatchObject({
      state: 'held',
      attempt: 2,
      renewedAgoMs: 5000,
      renewedAt: new Date(NOW - 5000).toISOString(),
    });
    expect(viewOf(claim('b', null, 0), NOW)).toMatchObject({
      state: 'unreadable',
      holder: null,
      renewedAgoMs: null,
    });
  });

  it('needs --force for a held or unreadable claim, however old its record says it is', () => {
    expect(needsForce(claim('a', 'held', NOW - 59_999))).toBe(true);
    // A holder whose clock runs behind: its renewal looks a day old, and it may well live.
    expect(needsForce(claim('a', 'held', NOW - DAY))).toBe(true);
    expect(needsForce(claim('a', null, 0))).toBe(true);
    expect(needsForce(claim('a', 'done', NOW))).toBe(false);
    expect(needsForce(claim('a', 'released', NOW))).toBe(false);
  });
});

describe('pruning', () => {
  it('chooses the done claims a day old by their record, nothing held, released or unreadable', () => {
    const claims = [
      claim('old-done', 'done', NOW - DAY),
      claim('new-done', 'done', NOW - DAY + 1),
      claim('old-held', 'held', NOW - 9 * DAY),
      claim('old-released', 'released', NOW - 9 * DAY),
      claim('unreadable', null, 0),
    ];
    expect(prunable(claims, NOW).map((c) => c.item)).toEqual(['old-done']);
    expect(prunable(claims, NOW, 0).map((c) => c.item)).toEqual(['old-done', 'new-done']);
  });
});
