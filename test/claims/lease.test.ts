import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeLease,
  encodeLease,
  judgeClaim,
  takeoverOf,
  type Holder,
  type LeaseRecord,
  UNREAD_LEASE_MS,
} from '../../src/claims/lease.js';

const text = fc.string({ unit: 'binary' });
const holder = fc.record({ host: text, instance: text, boot: text });
const record: fc.Arbitrary<LeaseRecord> = fc
  .record({
    item: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/),
    file: text,
    noun: text,
    holder,
    attempt: fc.integer({ min: 1, max: 1000 }),
    leaseMs: fc.integer({ min: 1, max: 10_000_000 }),
    renewedAt: fc.integer({ min: 0, max: 2 ** 45 }),
    state: fc.constantFrom('held' as const, 'done' as const, 'released' as const),
    nonce: fc.stringMatching(/^[0-9a-f]{16}$/),
    version: fc.constant(1 as const),
  })
  .chain((r) =>
    fc
      .option(text, { nil: undefined })
      .map((branch) => (branch === undefined ? r : { ...r, branch })),
  );
const me: Holder = { host: 'me', instance: 'i', boot: 'b' };

describe('lease records', () => {
  it('read back what was written, whatever the file name holds', () => {
    fc.assert(
      fc.property(record, (r) => {
        expect(decodeLease(encodeLease(r))).toEqual(r);
      }),
    );
  });

  it('are not read from a message engine did not write', () => {
    const r: LeaseRecord = {
      item: 'x',
      file: 'f',
      noun: 'n',
      holder: me,
      attempt: 1,
      leaseMs: 1,
      renewedAt: 0,
      state: 'held',
      nonce: '00',
      version: 1,
    };
    expect(decodeLease(`merge claim\n\n${JSON.stringify(r)}`)).toBeNull();
    expect(decodeLease('engine claim x: held\n\nnot json')).toBeNull();
    expect(decodeLease(`engine claim x\n\n${JSON.stringify({ ...r, attempt: 0 })}`)).toBeNull();
    expect(decodeLease(`engine claim x\n\n${JSON.stringify({ ...r, item: '../x' })}`)).toBeNull();
    expect(decodeLease(`engine claim x\n\n${JSON.stringify({ ...r, version: 2 })}`)).toBeNull();
  });
});

describe('judging another host claim', () => {
  it('is expired after a lease of observation with a stale record, or two leases whatever it says', () => {
    fc.assert(
      fc.property(
        record,
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        (r, seenSince, monotonicNow, wallNow) => {
          const held = { ...r, state: 'held' as const };
          const verdict = judgeClaim(
            held,
            { commit: 'c', seenSince },
            { monotonicNow, wallNow },
            me,
          );
          const unchangedFor = monotonicNow - seenSince;
          const expired =
            unchangedFor >= 2 * r.leaseMs ||
            (unchangedFor >= r.leaseMs && wallNow - r.renewedAt >= r.leaseMs);
          expect(verdict).toBe(expired ? 'expired' : 'held');
        },
      ),
    );
  });

  it('never expires on the wall clock alone: a step forward of it takes nothing over', () => {
    const r = {
      item: 'x',
      file: 'f',
      noun: 'n',
      holder: { host: 'h', instance: 'i', boot: 'b' },
      attempt: 1,
      leaseMs: 60_000,
      renewedAt: 1_000,
      state: 'held' as const,
      nonce: '0',
      version: 1 as const,
    };
    const observed = { commit: 'c', seenSince: 500 };
    expect(judgeClaim(r, observed, { monotonicNow: 5_000, wallNow: 1_000 + 3_600_000 }, me)).toBe(
      'held',
    );
  });

  it('judges a record it cannot read by the ref stillness alone, over a long lease', () => {
    const observed = { commit: 'c', seenSince: 0 };
    const wallNow = 2 ** 45;
    expect(judgeClaim(null, observed, { monotonicNow: 2 * UNREAD_LEASE_MS - 1, wallNow }, me)).toBe(
      'held',
    );
    expect(judgeClaim(null, observed, { monotonicNow: 2 * UNREAD_LEASE_MS, wallNow }, me)).toBe(
      'expired',
    );
  });

  it('knows its own claim, a done one and a released one', () => {
    fc.assert(
      fc.property(record, (r) => {
        const observed = { commit: 'c', seenSince: 0 };
        const late = { monotonicNow: 2 ** 50, wallNow: 2 ** 50 };
        const early = { monotonicNow: 0, wallNow: 0 };
        expect(judgeClaim({ ...r, holder: me, state: 'held' }, observed, late, me)).toBe('mine');
        expect(judgeClaim({ ...r, state: 'done' }, observed, late, me)).toBe('done');
        expect(judgeClaim({ ...r, state: 'released' }, observed, early, me)).toBe('free');
      }),
    );
  });

  it('raises the attempt on a takeover, as the fencing token, with a new nonce', () => {
    fc.assert(
      fc.property(record, fc.integer({ min: 0 }), (r, now) => {
        const next = takeoverOf(r, me, now);
        expect(next).toMatchObject({
          holder: me,
          attempt: r.attempt + 1,
          renewedAt: now,
          state: 'held',
        });
        expect(next.nonce).not.toBe(r.nonce);
        // A requeue's takeover keeps the claim's file and noun, and names no agent's branch.
        expect(next).toMatchObject({ file: r.file, noun: r.noun });
        expect(next.branch).toBeUndefined();
        const claim = { file: 'sessions/b.md', noun: 'fix', branch: 'engine/fix/b-0123' };
        expect(takeoverOf(r, me, now, claim)).toMatchObject(claim);
      }),
    );
  });
});
