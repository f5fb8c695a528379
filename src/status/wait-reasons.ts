/**
 * Why each waiting item is not running yet, for `engine status`: what its file says
 * (dispatch/work-order.ts: its quiet period, a retry's Not Before, the file's other claim), then,
 * walking the items ready now in dispatch order as the daemon hands out slots, the usage-limit
 * pause, its noun at the Max of §TAG_DISPATCH, and --max-agents. Pure.
 */
import type { Blocker } from '../dispatch/depends-on.js';
import type { Wait } from '../dispatch/work-order.js';
import type { Admission, LimitPause } from '../sessions/limit-pause.js';
import { lifecycleTag } from '../tags/tag-name.js';

/** Why an item waits; times are ISO. */
export type WaitReason =
  /** Written less than the debounce period ago. */
  | { kind: 'quiet'; until: string }
  /** A retry's backoff: the last Recovery entry's Not Before. */
  | { kind: 'not-before'; until: string }
  /** The file's other claim must end first: one claim per file. */
  | { kind: 'claim'; tag: string }
  /** Its noun's agents fill the noun's Max. */
  | { kind: 'noun-max'; noun: string; max: number; running: number }
  /** --max-agents agents run. */
  | { kind: 'agents'; max: number; running: number }
  /** Held after the requests its Depends On names (dispatch/depends-on.ts): each blocker. */
  | { kind: 'blocked'; by: Blocker[] }
  /** The usage-limit pause: until a time, or (null) until the probe out now is judged. */
  | { kind: 'paused'; until: string | null; probe: string | null };

/**
 * The file's own wait, with its times as ISO. A new kind of wait of work-order is converted here
 * and worded in wait-text.ts: the compiler names both.
 */
export function waitReasonOf(wait: Wait): WaitReason {
  switch (wait.kind) {
    case 'quiet':
    case 'not-before':
      return { kind: wait.kind, until: new Date(wait.until).toISOString() };
    case 'claim':
      return wait;
  }
}

/** The slots the daemon hands out, as they are now. */
export interface SlotFacts {
  /** --max-agents; 0: no cap. */
  maxAgents: number;
  /** A noun's Max in §TAG_DISPATCH; undefined: none. */
  capOf(noun: string): number | undefined;
  /** The nouns of the agents running now, one entry per agent. */
  running: readonly string[];
  pause: LimitPause | null;
  admission: Admission;
}

interface Slotted {
  file: string;
  noun: string;
  wait: WaitReason | null;
}

/**
 * The items (in dispatch order) with the wait of each one ready now that would not get a slot:
 * the first ones take the free slots, as the daemon's would.
 */
export function withSlotWaits<T extends Slotted>(ordered: readonly T[], facts: SlotFacts): T[] {
  const byNoun = new Map<string, number>();
  for (const noun of facts.running) byNoun.set(noun, (byNoun.get(noun) ?? 0) + 1);
  let total = facts.running.length;
  let probe = facts.admission.kind === 'probe';
  const claimed = new Map<string, string>();
  return ordered.map((item) => {
    if (item.wait !== null) return item;
    const wait = slotWait(item, facts, byNoun.get(item.noun) ?? 0, total, claimed.get(item.file));
    if (wait !== null) return { ...item, wait };
    if (facts.admission.kind !== 'go' && !probe) return { ...item, wait: paused(facts) };
    probe = false;
    byNoun.set(item.noun, (byNoun.get(item.noun) ?? 0) + 1);
    total++;
    claimed.set(item.file, lifecycleTag('claimed', item.noun));
    return item;
  });
}

function slotWait(
  item: Slotted,
  facts: SlotFacts,
  nounRunning: number,
  total: number,
  claimInFile: string | undefined,
): WaitReason | null {
  if (claimInFile !== undefined) return { kind: 'claim', tag: claimInFile };
  if (facts.admission.kind === 'hold') return paused(facts);
  const cap = facts.capOf(item.noun);
  if (cap !== undefined && nounRunning >= cap)
    return { kind: 'noun-max', noun: item.noun, max: cap, running: nounRunning };
  if (facts.maxAgents > 0 && total >= facts.maxAgents)
    return { kind: 'agents', max: facts.maxAgents, running: total };
  return null;
}

function paused({ admission, pause }: SlotFacts): WaitReason {
  const until = admission.kind === 'hold' && admission.until ? admission.until.toISOString() : null;
  return { kind: 'paused', until, probe: pause?.probe?.file ?? null };
}
