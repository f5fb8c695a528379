import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeLease,
  encodeLease,
  judgeClaim,
  takeoverOf,
  type Holder,
  type LeaseRecord,
} from '../../src/claims/lease.js';

const text = fc.string({ unit: 'binary' });
const holder = fc.record({ host: text, instance: text, boot: text });
const record: fc.Arbitrary<LeaseRecord> = fc.record({
  item: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/),
  file: text,
  noun: text,
  holder,
  attempt: fc.integer({ min: 1, max: 1000 }),
  leaseMs: fc.integer({ min: 1, max: 10_000_000 }),
  renewedAt: fc.integer({ min: 0, max: 2 ** 45 }),
  state: fc.constantFrom('held' as const, 'done' as const, 'released' as const),
});
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
    };
    expect(decodeLease(`merge claim\n\n${JSON.stringify(r)}`)).toBeNull();
    expect(decodeLease('engine claim x: held\n\nnot json')).toBeNull();
    expect(decodeLease(`engine claim x\n\n${JSON.stringify({ ...r, attempt: 0 })}`)).toBeNull();
    expect(decodeLease(`engine claim x\n\n${JSON.stringify({ ...r, item: '../x' })}`)).toBeNull();
  });
});

describe('judging another host claim', () => {
  it('is expired only when unchanged for a lease here and stale on its own record', () => {
    fc.assert(
      fc.property(
        record,
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        (r, seenSince, now) => {
          const held = { ...r, state: 'held' as const };
          const verdict = judgeClaim(held, { commit: 'c', seenSince }, now, me);
          const expired = now - seenSince >= r.leaseMs && now - r.renewedAt >= r.leaseMs;
          expect(verdict).toBe(expired ? 'expired' : 'held');
        },
      ),
    );
  });

  it('knows its own claim, a done one and a released one', () => {
    fc.assert(
      fc.property(record, (r) => {
        const observed = { commit: 'c', seenSince: 0 };
        expect(judgeClaim({ ...r, holder: me, state: 'held' }, observed, 2 ** 50, me)).toBe('mine');
        expect(judgeClaim({ ...r, state: 'done' }, observed, 0, me)).toBe('done');
        expect(judgeClaim({ ...r, state: 'released' }, observed, 0, me)).toBe('free');
        expect(judgeClaim(null, observed, 0, me)).toBe('free');
      }),
    );
  });

  it('raises the attempt on a takeover, as the fencing token', () => {
    fc.assert(
      fc.property(record, fc.integer({ min: 0 }), (r, now) => {
        const next = takeoverOf(r, me, now);
        expect(next).toMatchObject({
          holder: me,
          attempt: r.attempt + 1,
          renewedAt: now,
          state: 'held',
        });
      }),
    );
  });
});
