/**
 * Admission, pure: which ready items of the item table start now, and why each other one waits.
 * One walk in dispatch order (dispatch/work-order.ts compareOrder, the rule --dry-run and
 * `engine status` list by) over the caps (--max-agents, a noun's Max) and the usage-limit pause
 * (sessions/limit-pause.ts admission). An item its noun's cap holds back never keeps another
 * noun's item from a free slot, and an item the caps hold back never becomes the probe.
 */
import { compareOrder, type Aging } from '../dispatch/work-order.js';
import type { ItemRow, SlotWait } from './item-table.js';
import type { PlannedItem } from './request-snapshot.js';

/** What the usage-limit pause lets through now: all, none, or one item as the probe. */
export type PauseGate = 'go' | 'hold' | 'probe';

export interface AdmissionInput {
  /** Ready rows (queued or waiting for a slot), each with its item. */
  ready: ItemRow[];
  /** Slots held now (launching, running, ending), of a noun or of all. */
  held: (noun?: string) => number;
  /** The noun's Max in the table in force (undefined: none). */
  capOf: (noun: string) => number | undefined;
  /** --max-agents (0: no cap). */
  maxAgents: number;
  pause: PauseGate;
  /** Priority aging (--aging), null: off. */
  aging: Aging | null;
}

export type Admission =
  | { row: ItemRow; item: PlannedItem; go: 'launch' | 'probe' }
  | { row: ItemRow; item: PlannedItem; wait: SlotWait; cap?: number };

export function decideAdmission(input: AdmissionInput): Admission[] {
  const { capOf, maxAgents } = input;
  const taken = new Map<string, number>();
  let total = input.held();
  let probeOut = false;
  const ready = input.ready
    .filter((row): row is ItemRow & { item: PlannedItem } => row.item !== null)
    .sort((a, b) => compareOrder(a.item, b.item, input.aging));
  return ready.map((row): Admission => {
    const { item } = row;
    const held = (taken.get(item.noun) ?? 0) + input.held(item.noun);
    const cap = capOf(item.noun);
    if (maxAgents > 0 && total >= maxAgents) return { row, item, wait: 'agents' };
    if (cap !== undefined && held >= cap) return { row, item, wait: 'noun', cap };
    if (input.pause === 'hold') return { row, item, wait: 'pause' };
    if (input.pause === 'probe' && probeOut) return { row, item, wait: 'probe' };
    probeOut = input.pause === 'probe';
    taken.set(item.noun, (taken.get(item.noun) ?? 0) + 1);
    total++;
    return { row, item, go: input.pause === 'probe' ? 'probe' : 'launch' };
  });
}
