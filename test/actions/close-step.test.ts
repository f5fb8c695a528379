/**
 * `engine close`'s request in the daemon's pure close decision (daemon/close-finished.ts): the
 * `.close-requested` time makes the close due for everyone who reads it, so `engine close` and a
 * daemon following the same session take each step once.
 */
import { expect, it } from 'vitest';
import { closeDueAt, closeStep, type CloseFacts } from '../../src/daemon/close-finished.js';

const MIN = 60_000;
const GRACE = 10_000;
const DONE = 1_000_000;
const REQUESTED = DONE + MIN;
const facts = (over: Partial<CloseFacts>): CloseFacts => ({
  agent: 'claude',
  doneAtMs: DONE,
  limitedAtMs: null,
  requestedAtMs: REQUESTED,
  askedAtMs: null,
  termAtMs: null,
  killAtMs: null,
  atPrompt: true,
  closeAfterMs: 5 * MIN,
  graceMs: GRACE,
  nowMs: REQUESTED,
  ...over,
});

it('is due when a human asked, before --close-after-done, and with closing off (0)', () => {
  expect(closeDueAt(facts({}))).toBe(REQUESTED);
  expect(closeDueAt(facts({ closeAfterMs: 0 }))).toBe(REQUESTED);
  expect(closeDueAt(facts({ requestedAtMs: null, closeAfterMs: 0 }))).toBeNull();
  expect(closeStep(facts({ closeAfterMs: 0 }))).toEqual({ kind: 'ask' });
  // Never for another profile, asked or not.
  expect(closeStep(facts({ agent: 'custom' }))).toEqual({ kind: 'never' });
});

it('counts the steps taken since the request, whoever took them: the daemon waits on the same grace', () => {
  const asked = facts({ askedAtMs: REQUESTED + 5, nowMs: REQUESTED + 1000 });
  expect(closeStep(asked)).toEqual({ kind: 'wait', atMs: REQUESTED + 5 + GRACE });
  expect(closeStep({ ...asked, closeAfterMs: 0 })).toEqual(closeStep(asked));
  const termed = facts({
    askedAtMs: REQUESTED,
    termAtMs: REQUESTED + GRACE,
    nowMs: REQUESTED + GRACE,
  });
  expect(closeStep(termed)).toEqual({ kind: 'wait', atMs: REQUESTED + 2 * GRACE });
});
