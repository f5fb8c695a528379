/**
 * Dispatch order for items waiting for a slot: weight (`#P0`, then `#P1`, then `#P2` or none),
 * then the §TAG_DISPATCH priority (lower first), then first-ready first.
 */
export interface OrderKey {
  /** 0 for #P0, 1 for #P1, 2 for #P2 or no weight tag. */
  weight: number;
  tablePriority: number;
  readyAt: number;
}

export function weightOf(tags: Iterable<string>): number {
  let weight = 2;
  for (const tag of tags) {
    if (tag === '#P0') weight = Math.min(weight, 0);
    else if (tag === '#P1') weight = Math.min(weight, 1);
  }
  return weight;
}

export function compareOrder(a: OrderKey, b: OrderKey): number {
  return a.weight - b.weight || a.tablePriority - b.tablePriority || a.readyAt - b.readyAt;
}

/**
 * p-queue runs higher numbers first and keeps insertion order among equals; this maps weight
 * and table priority onto one number so first-ready-first holds within a class.
 */
export function queuePriority(key: Pick<OrderKey, 'weight' | 'tablePriority'>): number {
  return -(key.weight * 1_000_000 + Math.round(key.tablePriority * 1000));
}
