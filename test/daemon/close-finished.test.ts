import { describe, expect, it } from 'vitest';
import { closeStep, type CloseFacts } from '../../src/daemon/close-finished.js';

const MIN = 60_000;
const GRACE = 10_000;
const DONE = 1_000_000;
const facts = (over: Partial<CloseFacts>): CloseFacts => ({
  agent: 'claude',
  doneAtMs: DONE,
  askedAtMs: null,
  closeAfterMs: 5 * MIN,
  graceMs: GRACE,
  nowMs: DONE,
  ...over,
});

describe('closeStep, the decision to close a finished interactive agent', () => {
  it('never closes an agent whose item is not done, however long it has run', () => {
    expect(closeStep(facts({ doneAtMs: null, nowMs: DONE + 1000 * MIN }))).toEqual({
      kind: 'never',
    });
  });

  it('never closes with --close-after-done 0', () => {
    expect(closeStep(facts({ closeAfterMs: 0, nowMs: DONE + 1000 * MIN }))).toEqual({
      kind: 'never',
    });
  });

  it.each(['claude-print', 'custom', undefined])('never closes a %s agent', (agent) => {
    expect(closeStep(facts({ agent, nowMs: DONE + 1000 * MIN }))).toEqual({ kind: 'never' });
  });

  it('leaves it open for --close-after-done after the done mark, then asks it to exit', () => {
    expect(closeStep(facts({ nowMs: DONE }))).toEqual({ kind: 'wait', atMs: DONE + 5 * MIN });
    expect(closeStep(facts({ nowMs: DONE + 5 * MIN - 1 }))).toEqual({
      kind: 'wait',
      atMs: DONE + 5 * MIN,
    });
    expect(closeStep(facts({ nowMs: DONE + 5 * MIN }))).toEqual({ kind: 'ask' });
  });

  it('takes a fraction of a minute', () => {
    expect(closeStep(facts({ closeAfterMs: 0.05 * MIN, nowMs: DONE + 2999 }))).toEqual({
      kind: 'wait',
      atMs: DONE + 3000,
    });
  });

  it('asks first even when the deadline passed long ago (a daemon that was down meanwhile)', () => {
    expect(closeStep(facts({ nowMs: DONE + 1000 * MIN }))).toEqual({ kind: 'ask' });
  });

  it('signals SIGTERM a grace period after the ask, SIGKILL a grace period later', () => {
    const asked = DONE + 6 * MIN;
    expect(closeStep(facts({ askedAtMs: asked, nowMs: asked + GRACE - 1 }))).toEqual({
      kind: 'wait',
      atMs: asked + GRACE,
    });
    expect(closeStep(facts({ askedAtMs: asked, nowMs: asked + GRACE }))).toEqual({
      kind: 'signal',
      signal: 'SIGTERM',
      nextAtMs: asked + 2 * GRACE,
    });
    expect(closeStep(facts({ askedAtMs: asked, nowMs: asked + 2 * GRACE }))).toEqual({
      kind: 'signal',
      signal: 'SIGKILL',
      nextAtMs: asked + 3 * GRACE,
    });
  });
});
