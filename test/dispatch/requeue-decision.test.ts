import { describe, expect, it } from 'vitest';
import {
  decideRequeue,
  LAUNCH_RETRIES,
  LIMIT_RETRIES,
  MAX_WAIT_MS,
  limitResumesAt,
  type RetryPolicy,
} from '../../src/dispatch/requeue-decision.js';

const NOW = new Date('2026-11-24T10:00:00.000Z');
const policy: RetryPolicy = { retries: 0, retryBackoffMs: 60_000, limitBackoffMs: 15 * 60_000 };
const fresh = { attempts: 0, launchFailures: 0, usageLimits: 0 };
const at = (ms: number) => new Date(NOW.getTime() + ms);

describe('decideRequeue', () => {
  it('sends a usage-limited claim back to #delegated-X, not as an attempt, until the reset', () => {
    const resetsAt = at(3_600_000);
    const d = decideRequeue(
      { kind: 'usage-limit', resetsAt },
      { ...fresh, attempts: 7 },
      policy,
      NOW,
    );
    expect(d).toEqual({
      tag: 'delegated',
      failure: 'usage-limit',
      reason: `usage limit, resets at ${resetsAt.toISOString()}`,
      countsAsAttempt: false,
      notBefore: resetsAt,
      gaveUp: false,
    });
  });

  it('waits the limit backoff when the agent gave no reset time, or one already past', () => {
    expect(decideRequeue({ kind: 'usage-limit' }, fresh, policy, NOW).notBefore).toEqual(
      at(15 * 60_000),
    );
    expect(limitResumesAt({ resetsAt: at(-1000) }, NOW, policy)).toEqual(at(15 * 60_000));
  });

  it('counts the limit backoff from when the agent reported the limit, so a pause taken then and the later requeue agree', () => {
    const since = at(-40_000);
    expect(limitResumesAt({ since }, NOW, policy)).toEqual(at(15 * 60_000 - 40_000));
    expect(decideRequeue({ kind: 'usage-limit', since }, fresh, policy, NOW)).toMatchObject({
      notBefore: at(15 * 60_000 - 40_000),
      reason: `usage limit, resets at ${at(15 * 60_000 - 40_000).toISOString()}`,
    });
    // A reset time the agent gave wins while it is after the report.
    expect(limitResumesAt({ since, resetsAt: at(3_600_000) }, NOW, policy)).toEqual(at(3_600_000));
  });

  it('with no retries, an agent failure goes to #needs-X as today, with its own reason', () => {
    const d = decideRequeue({ kind: 'agent', reason: 'exit 1' }, fresh, policy, NOW);
    expect(d).toMatchObject({
      tag: 'needs',
      reason: 'exit 1',
      countsAsAttempt: true,
      gaveUp: false,
    });
    expect(d.notBefore).toBeNull();
  });

  it('with --retries 2, the first two failures go back with a doubling backoff, the third gives up', () => {
    const p = { ...policy, retries: 2 };
    const first = decideRequeue({ kind: 'agent', reason: 'exit 1' }, fresh, p, NOW);
    expect(first).toMatchObject({ tag: 'delegated', countsAsAttempt: true, notBefore: at(60_000) });
    const second = decideRequeue(
      { kind: 'agent', reason: 'exit 1' },
      { ...fresh, attempts: 1 },
      p,
      NOW,
    );
    expect(second).toMatchObject({ tag: 'delegated', notBefore: at(120_000) });
    const third = decideRequeue(
      { kind: 'agent', reason: 'exit 1' },
      { ...fresh, attempts: 2 },
      p,
      NOW,
    );
    expect(third).toMatchObject({
      tag: 'needs',
      reason: 'exit 1; gave up after 3 attempts',
      notBefore: null,
      gaveUp: true,
    });
  });

  it('retries launch failures with a doubling backoff, not as attempts, and gives up after a bound', () => {
    const launch = { kind: 'launch', reason: 'spawn failed: no tmux' } as const;
    const p = { ...policy, retries: 0 };
    for (let n = 0; n < LAUNCH_RETRIES; n++) {
      const d = decideRequeue(launch, { attempts: 3, launchFailures: n, usageLimits: 0 }, p, NOW);
      expect(d).toMatchObject({ tag: 'delegated', countsAsAttempt: false, gaveUp: false });
      expect(d.notBefore).toEqual(at(60_000 * 2 ** n));
    }
    const last = decideRequeue(
      launch,
      { attempts: 3, launchFailures: LAUNCH_RETRIES, usageLimits: 0 },
      p,
      NOW,
    );
    expect(last).toMatchObject({ tag: 'needs', countsAsAttempt: false, gaveUp: true });
    expect(last.reason).toContain(`gave up after ${LAUNCH_RETRIES + 1} launch failures`);
  });

  it('gives up on an item after a bound of usage limits in a row: a limit is no attempt, and nothing loops', () => {
    const limit = { kind: 'usage-limit' } as const;
    const within = decideRequeue(limit, { ...fresh, usageLimits: LIMIT_RETRIES - 1 }, policy, NOW);
    expect(within).toMatchObject({ tag: 'delegated', gaveUp: false });
    const last = decideRequeue(limit, { ...fresh, usageLimits: LIMIT_RETRIES }, policy, NOW);
    expect(last).toMatchObject({ tag: 'needs', countsAsAttempt: false, gaveUp: true });
    expect(last.reason).toContain(`gave up after ${LIMIT_RETRIES + 1} usage limits in a row`);
  });

  it('never waits past the longest timer, however many retries or however long a backoff', () => {
    const p = { ...policy, retries: 100, limitBackoffMs: Number.MAX_SAFE_INTEGER };
    const agent = { kind: 'agent', reason: 'exited 1' } as const;
    const late = decideRequeue(agent, { ...fresh, attempts: 60 }, p, NOW);
    expect(late.notBefore).toEqual(at(MAX_WAIT_MS));
    expect(() => late.notBefore?.toISOString()).not.toThrow();
    const limit = decideRequeue({ kind: 'usage-limit' }, fresh, p, NOW);
    expect(limit.notBefore).toEqual(at(MAX_WAIT_MS));
  });
});
