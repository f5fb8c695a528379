/**
 * When a waiting `#delegated-X` item may be claimed, and in which order: one rule for the daemon,
 * `--dry-run` and `engine status`, from the same facts of the file. Dispatch order is weight
 * (`#P0`, then `#P1`, then `#P2` or none), then the §TAG_DISPATCH priority (lower first), then
 * first ready first. With `--aging`, an item ready for longer than its period orders one weight
 * band up, never more (docs/DAEMON.md, "Readiness and order").
 */
import type { RecoveryRecord } from '../tags/recovery-entries.js';

export interface OrderKey {
  /** 0 for #P0, 1 for #P1, 2 for #P2 or no weight tag. */
  weight: number;
  tablePriority: number;
  /** When the item may be claimed (ms since the epoch): see readiness. */
  readyAt: number;
  /** The request file and noun: the last tie-break, so every reader orders ties alike. */
  file?: string;
  noun?: string;
}

/** What the readiness of a file's items is decided from, all read from the file. */
export interface ReadyFacts {
  /** Its last write. */
  mtimeMs: number;
  /** Its last `## Recovery` entry, if any. */
  lastRecovery: RecoveryRecord | undefined;
  /** A claim it carries (`#claimed-X`): one claim per request file at a time. */
  claim: string | null;
}

/** Why an item may not be claimed now. */
export type Wait =
  /** Written less than the debounce period ago: read again once quiet. */
  | { kind: 'quiet'; until: number }
  /** A retry's backoff: the last Recovery entry's Not Before. */
  | { kind: 'not-before'; until: number }
  /** The file's other claim must end first (it is read again when it does). */
  | { kind: 'claim'; tag: string };

export interface Readiness {
  readyAt: number;
  /** null: it may be claimed now. */
  wait: Wait | null;
}

/**
 * A retry's Not Before, from the last Recovery entry. A usage limit's item waits for the
 * queue-wide pause instead (sessions/limit-pause.ts), so `engine resume` frees it too.
 */
export function retryNotBefore(last: RecoveryRecord | undefined): Date | null {
  return last?.failure === 'usage-limit' ? null : (last?.notBefore ?? null);
}

/** Once the file has been quiet for `debounceMs` since its last write, and past its retry's Not Before. */
export function readyAtOf(facts: Omit<ReadyFacts, 'claim'>, debounceMs: number): number {
  const notBefore = retryNotBefore(facts.lastRecovery)?.getTime() ?? Number.NEGATIVE_INFINITY;
  return Math.max(facts.mtimeMs + debounceMs, notBefore);
}

/** Ready from readyAtOf on, while the file carries no other claim. */
export function readiness(facts: ReadyFacts, debounceMs: number, now: number): Readiness {
  const quietAt = facts.mtimeMs + debounceMs;
  const readyAt = readyAtOf(facts, debounceMs);
  if (facts.claim !== null) return { readyAt, wait: { kind: 'claim', tag: facts.claim } };
  if (readyAt <= now) return { readyAt, wait: null };
  if (readyAt > quietAt) return { readyAt, wait: { kind: 'not-before', until: readyAt } };
  return { readyAt, wait: { kind: 'quiet', until: quietAt } };
}

export function weightOf(tags: Iterable<string>): number {
  let weight = 2;
  for (const tag of tags) {
    if (tag === '#P0') weight = Math.min(weight, 0);
    else if (tag === '#P1') weight = Math.min(weight, 1);
  }
  return weight;
}

/** Priority aging (`--aging MIN`) at one moment; null: off. */
export interface Aging {
  /** An item ready for longer than this orders one weight band up. */
  afterMs: number;
  /** The clock's now (ms since the epoch): aging is a function of readyAt and now alone. */
  now: number;
}

/** The aging of the `aging` setting (held in milliseconds, agingMs; 0: off) at `now`. */
export function agingOf(afterMs: number, now: number): Aging | null {
  return afterMs > 0 ? { afterMs, now } : null;
}

/**
 * Whether an item has waited longer than the aging period since it became ready, so it orders
 * one band up (`#P2` as `#P1`, `#P1` as `#P0`). One band only: old `#P2` work never passes fresh
 * `#P0` work, which a boost growing with age would (a peer had to cap its boost after old P3 work outranked fresh P1).
 */
export function isAged(key: OrderKey, aging: Aging | null = null): boolean {
  return aging !== null && key.weight > 0 && aging.now - key.readyAt > aging.afterMs;
}

export function compareOrder(a: OrderKey, b: OrderKey, aging: Aging | null = null): number {
  const weight = (key: OrderKey) => key.weight - (isAged(key, aging) ? 1 : 0);
  return (
    weight(a) - weight(b) ||
    a.tablePriority - b.tablePriority ||
    a.readyAt - b.readyAt ||
    byText(a.file ?? '', b.file ?? '') ||
    byText(a.noun ?? '', b.noun ?? '')
  );
}

/** Code-unit order, the same in every locale. */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The order in which the daemon claims waiting items, given free slots: those ready now in
 * dispatch order, then the others as they become ready (a claim's end has no time: last). Each
 * says whether aging moved it up, for `engine status` and --dry-run.
 */
export function dispatchOrder<T extends OrderKey & Readiness>(
  items: readonly T[],
  aging: Aging | null = null,
): Array<T & { aged: boolean }> {
  const until = (item: T) =>
    item.wait === null
      ? Number.NEGATIVE_INFINITY
      : item.wait.kind === 'claim'
        ? Number.POSITIVE_INFINITY
        : item.wait.until;
  return [...items]
    .sort((a, b) => Math.sign(until(a) - until(b) || 0) || compareOrder(a, b, aging))
    .map((item) => ({ ...item, aged: isAged(item, aging) }));
}
