/**
 * The slots of running agents: --max-agents in all, and of each noun the Max column of
 * §TAG_DISPATCH. Items wait here in dispatch order (compareOrder, the rule --dry-run and `engine
 * status` list them by), and a freed slot goes to the first that may take it: an item held by its
 * noun's cap never keeps another noun's item from a free slot; it stays `#delegated-X`,
 * unclaimed, until a slot of its noun frees. Pure bookkeeping in memory, like the claim ledger: a
 * restarted daemon counts again from the agents it adopts.
 */
import { compareOrder } from '../dispatch/work-order.js';
import type { WorkItem } from '../dispatch/work-items.js';

/** Gives a slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

interface Waiter {
  item: WorkItem;
  /** null: the daemon stops, the item is not dispatched. */
  resolve: (release: ReleaseSlot | null) => void;
  /** Told once, the first time the item is found held by its noun's cap. */
  onHeld: (cap: number) => void;
  told: boolean;
}

export class NounSlots {
  private readonly held = new Map<string, number>();
  /** In dispatch order, so the first of a noun to get a freed slot is the one the queue would take. */
  private readonly waiting: Waiter[] = [];
  /**
   * No slot is handed out before start(): the agents adopted at start take theirs first, or an
   * item read in the first pass would take the slot of an agent that already runs.
   */
  private started = false;

  /**
   * `capOf`: the noun's cap in the table in force (undefined: none), read at each decision;
   * `total`: the agents of all nouns at most (--max-agents).
   */
  constructor(
    private readonly capOf: (noun: string) => number | undefined,
    private readonly total = Number.POSITIVE_INFINITY,
  ) {}

  /** Agents of the noun holding a slot. */
  count(noun: string): number {
    return this.held.get(noun) ?? 0;
  }

  /** A slot of the noun now if one is free, else null (none is waited for). */
  tryTake(noun: string): ReleaseSlot | null {
    if (!this.started || this.isFull() || this.nounCapReached(noun) !== undefined) return null;
    return this.hold(noun);
  }

  private isFull(): boolean {
    let running = 0;
    for (const count of this.held.values()) running += count;
    return running >= this.total;
  }

  /** The noun's cap when its agents fill it, else undefined. */
  private nounCapReached(noun: string): number | undefined {
    const cap = this.capOf(noun);
    return cap !== undefined && this.count(noun) >= cap ? cap : undefined;
  }

  /**
   * Resolves with a slot of the item's noun once one is free; with null if clear() ran first.
   * `onHeld` is told when the item has to wait for one.
   */
  take(
    item: WorkItem,
    onHeld: (cap: number) => void = () => undefined,
  ): Promise<ReleaseSlot | null> {
    return new Promise((resolve) => {
      const at = this.waiting.findIndex((w) => compareOrder(item, w.item) < 0);
      this.waiting.splice(at === -1 ? this.waiting.length : at, 0, {
        item,
        resolve,
        onHeld,
        told: false,
      });
      this.wake();
    });
  }

  /** Items waiting for a slot of the noun. */
  waitingFor(noun: string): number {
    return this.waiting.filter((w) => w.item.noun === noun).length;
  }

  /**
   * A slot taken whatever the cap: an agent adopted at start runs already, and counts against its
   * noun's cap until it ends.
   */
  hold(noun: string): ReleaseSlot {
    this.held.set(noun, this.count(noun) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(noun) - 1;
      if (left > 0) this.held.set(noun, left);
      else this.held.delete(noun);
      this.wake();
    };
  }

  /** The adopted agents hold their slots: items may take the rest. */
  start(): void {
    this.started = true;
    this.wake();
  }

  /** Hands freed slots to waiting items, first in dispatch order; also after a cap was raised. */
  wake(): void {
    for (let i = 0; i < this.waiting.length;) {
      const waiter = this.waiting[i] as Waiter;
      const release = this.tryTake(waiter.item.noun);
      if (!release) {
        const cap = this.nounCapReached(waiter.item.noun);
        if (this.started && cap !== undefined && !waiter.told) {
          waiter.told = true;
          waiter.onHeld(cap);
        }
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      waiter.resolve(release);
    }
  }

  /** The daemon stops: every waiting item is let go without a slot. */
  clear(): void {
    for (const waiter of this.waiting.splice(0)) waiter.resolve(null);
  }
}
