/**
 * Where a dead claim goes, decided from the failure, the item's history and the policy alone
 * (pure, so it is tested with any clock):
 *
 * - a usage limit is not the item's failure: back to `#delegated-X`, not an attempt, not claimed
 *   before the limit resets (the agent's reset time, else now + the limit backoff);
 * - a launch failure (tmux unreachable, a spawn error) is not the agent's: back to
 *   `#delegated-X`, not an attempt, with a backoff that doubles, at most LAUNCH_RETRIES in a row;
 * - an agent failure is an attempt: back to `#delegated-X` with a doubling backoff while the
 *   attempts are within `retries`, then to `#needs-X` for a human.
 *
 * Every path is bounded: nothing loops.
 */
import { countsAsAttempt, type FailureKind } from '../tags/recovery-entries.js';

export type Failure =
  | { kind: 'agent'; reason: string }
  /** `since`: when the agent reported it, if known (else the requeue's now). */
  | { kind: 'usage-limit'; resetsAt?: Date; since?: Date }
  | { kind: 'launch'; reason: string };

export interface RetryPolicy {
  /** Agent failures sent back to `#delegated-X` before one goes to a human. */
  retries: number;
  /** The first retry's wait; each next one waits twice as long. */
  retryBackoffMs: number;
  /** How long a usage limit lasts when the agent did not say. */
  limitBackoffMs: number;
}

export interface ItemHistory {
  /** Failed attempts before this one (Recovery entries that count). */
  attempts: number;
  /** Launch failures in a row before this one. */
  launchFailures: number;
  /** Usage limits in a row before this one. */
  usageLimits: number;
}

export interface RequeueDecision {
  tag: 'needs' | 'delegated';
  failure: FailureKind;
  reason: string;
  countsAsAttempt: boolean;
  /** Not claimed again before this time; null for `#needs-X`. */
  notBefore: Date | null;
  /** Retries were allowed and are spent: the `gave-up` event. */
  gaveUp: boolean;
}

/** Launch failures in a row that are retried; the next goes to a human. */
export const LAUNCH_RETRIES = 5;

/**
 * Usage limits in a row that send an item back; the next goes to a human. A limit is no attempt,
 * so without a bound an item whose runs keep reading as limited would come back forever.
 */
export const LIMIT_RETRIES = 10;

/** The longest wait: setTimeout's largest delay, about 24.8 days (a Date past it may not exist). */
export const MAX_WAIT_MS = 2_147_483_647;

/**
 * When a queue held by a usage limit may run again: the agent's reset time, else the backoff
 * after the limit was reported (`since`, else `now`). Counted from the report, the time is the
 * same for the daemon that pauses the queue when the limit is seen and for the later requeue.
 */
export function limitResumesAt(
  failure: { resetsAt?: Date; since?: Date },
  now: Date,
  policy: Pick<RetryPolicy, 'limitBackoffMs'>,
): Date {
  const from = failure.since ?? now;
  const { resetsAt } = failure;
  const latest = from.getTime() + MAX_WAIT_MS;
  return resetsAt !== undefined && resetsAt.getTime() > from.getTime()
    ? new Date(Math.min(resetsAt.getTime(), latest))
    : new Date(Math.min(from.getTime() + policy.limitBackoffMs, latest));
}

export function decideRequeue(
  failure: Failure,
  history: ItemHistory,
  policy: RetryPolicy,
  now: Date,
): RequeueDecision {
  const decided = { failure: failure.kind, countsAsAttempt: countsAsAttempt(failure.kind) };
  /** Back to `#delegated-X`, not claimed before `notBefore`. */
  const back = (reason: string, notBefore: Date): RequeueDecision => ({
    ...decided,
    tag: 'delegated',
    reason,
    notBefore,
    gaveUp: false,
  });
  /** To `#needs-X`, for a human. */
  const toHuman = (reason: string, gaveUp: boolean): RequeueDecision => ({
    ...decided,
    tag: 'needs',
    reason,
    notBefore: null,
    gaveUp,
  });
  const after = (ms: number) => new Date(now.getTime() + Math.min(ms, MAX_WAIT_MS));
  switch (failure.kind) {
    case 'usage-limit': {
      if (history.usageLimits >= LIMIT_RETRIES)
        return toHuman(
          `usage limit; gave up after ${history.usageLimits + 1} usage limits in a row`,
          true,
        );
      const until = limitResumesAt(failure, now, policy);
      return back(`usage limit, resets at ${until.toISOString()}`, until);
    }
    case 'launch': {
      if (history.launchFailures >= LAUNCH_RETRIES)
        return toHuman(
          `${failure.reason}; gave up after ${history.launchFailures + 1} launch failures in a row`,
          true,
        );
      return back(failure.reason, after(policy.retryBackoffMs * 2 ** history.launchFailures));
    }
    case 'agent': {
      const attempt = history.attempts + 1;
      if (attempt <= policy.retries)
        return back(
          `${failure.reason}; retry ${attempt} of ${policy.retries}`,
          after(policy.retryBackoffMs * 2 ** history.attempts),
        );
      const gaveUp = policy.retries > 0;
      return toHuman(
        gaveUp ? `${failure.reason}; gave up after ${attempt} attempts` : failure.reason,
        gaveUp,
      );
    }
  }
}
