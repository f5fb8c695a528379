import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeMarkTime, takeCloseMark } from '../../src/sessions/session-markers.js';
import { closeStep, type CloseFacts } from '../../src/daemon/close-finished.js';

const MIN = 60_000;
const GRACE = 10_000;
const DONE = 1_000_000;
const facts = (over: Partial<CloseFacts>): CloseFacts => ({
  agent: 'claude',
  doneAtMs: DONE,
  limitedAtMs: null,
  askedAtMs: null,
  termAtMs: null,
  killAtMs: null,
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

  it('signals SIGTERM a grace period after the ask, SIGKILL a grace period after the SIGTERM', () => {
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
    const termed = asked + GRACE + 500;
    expect(closeStep(facts({ askedAtMs: asked, termAtMs: termed, nowMs: termed + GRACE }))).toEqual(
      { kind: 'signal', signal: 'SIGKILL', nextAtMs: Number.POSITIVE_INFINITY },
    );
  });

  it('takes each step once, however often it looks: SIGTERM once, SIGKILL once, then nothing', () => {
    const asked = DONE + 6 * MIN;
    const termed = asked + GRACE;
    // Looked at again and again after the SIGTERM (every --poll-ms, or a restarted daemon).
    for (const nowMs of [termed, termed + 1, termed + GRACE / 2, termed + GRACE - 1])
      expect(closeStep(facts({ askedAtMs: asked, termAtMs: termed, nowMs }))).toEqual({
        kind: 'wait',
        atMs: termed + GRACE,
      });
    const killed = termed + GRACE;
    for (const nowMs of [killed, killed + GRACE, killed + 1000 * MIN])
      expect(
        closeStep(facts({ askedAtMs: asked, termAtMs: termed, killAtMs: killed, nowMs })),
      ).toEqual({ kind: 'exhausted' });
  });

  describe('an agent its hooks report limited (a usage limit: it waits instead of exiting)', () => {
    const LIMITED = 2_000_000;
    it('is asked to exit at once, done or not, even with --close-after-done 0', () => {
      expect(closeStep(facts({ doneAtMs: null, limitedAtMs: LIMITED, nowMs: LIMITED }))).toEqual({
        kind: 'ask',
      });
      expect(
        closeStep(facts({ doneAtMs: null, limitedAtMs: LIMITED, closeAfterMs: 0, nowMs: LIMITED })),
      ).toEqual({ kind: 'ask' });
    });

    it('then signalled after the grace periods, as a finished one', () => {
      const limited = { doneAtMs: null, limitedAtMs: LIMITED, askedAtMs: LIMITED };
      expect(closeStep(facts({ ...limited, nowMs: LIMITED + GRACE - 1 }))).toEqual({
        kind: 'wait',
        atMs: LIMITED + GRACE,
      });
      expect(closeStep(facts({ ...limited, nowMs: LIMITED + GRACE }))).toEqual({
        kind: 'signal',
        signal: 'SIGTERM',
        nextAtMs: LIMITED + 2 * GRACE,
      });
    });

    it('is never closed once it is no longer limited and not done', () => {
      expect(
        closeStep(
          facts({ doneAtMs: null, limitedAtMs: null, askedAtMs: LIMITED, nowMs: LIMITED * 2 }),
        ),
      ).toEqual({ kind: 'never' });
    });

    it.each(['claude-print', 'custom', undefined])('never closes a limited %s agent', (agent) => {
      expect(closeStep(facts({ agent, limitedAtMs: LIMITED, nowMs: LIMITED }))).toEqual({
        kind: 'never',
      });
    });
  });
});

describe('an ask made for an earlier reason', () => {
  it('does not count for a later close: a limited agent a human took over is asked again when done, not signalled', () => {
    // Asked for a limit long before; the human took it over, then finished the item.
    const askedForLimit = DONE - 60 * MIN;
    expect(closeStep(facts({ askedAtMs: askedForLimit, nowMs: DONE + 5 * MIN }))).toEqual({
      kind: 'ask',
    });
    // Nor do signals sent for that limit.
    expect(
      closeStep(
        facts({
          askedAtMs: askedForLimit,
          termAtMs: askedForLimit + GRACE,
          killAtMs: askedForLimit + 2 * GRACE,
          nowMs: DONE + 5 * MIN,
        }),
      ),
    ).toEqual({ kind: 'ask' });
    // The ask for this close (its mark renewed at the due time, a clock tick behind) counts.
    expect(closeStep(facts({ askedAtMs: DONE + 5 * MIN - 4, nowMs: DONE + 5 * MIN + 1 }))).toEqual({
      kind: 'wait',
      atMs: DONE + 5 * MIN - 4 + GRACE,
    });
  });
});

describe('takeCloseMark', () => {
  it('is taken once per close: a second caller, or a restarted daemon, does not take the step again; a mark older than the close is renewed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-close-mark-'));
    try {
      for (const mark of ['ask', 'SIGTERM', 'SIGKILL'] as const) {
        expect(await closeMarkTime(dir, mark)).toBeNull();
        expect(await takeCloseMark(dir, mark, Date.now() - MIN)).toBe(true);
        expect(await takeCloseMark(dir, mark, Date.now() - MIN)).toBe(false);
      }
      const old = new Date(Date.now() - 60 * MIN);
      await utimes(join(dir, '.close-term'), old, old);
      const staleBefore = Date.now() - MIN;
      expect(await takeCloseMark(dir, 'SIGTERM', staleBefore)).toBe(true);
      expect((await closeMarkTime(dir, 'SIGTERM'))!).toBeGreaterThanOrEqual(staleBefore);
      expect(await takeCloseMark(dir, 'SIGTERM', staleBefore)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
