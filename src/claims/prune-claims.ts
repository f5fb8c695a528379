/**
 * Pruning the claim refs of done items: a `done` claim is never taken again, so its ref only
 * keeps the item from being claimed anew once a person approves it again. A day after its end
 * (by the record's own time) it has served; each is deleted by compare-and-swap from the commit
 * seen, so a claim that changed since is kept. `engine claims prune` runs it; a daemon may call
 * `pruneClaims(where, prunable(claims, now))` after a refresh (docs/MULTI-HOST.md).
 */
import { messageOf } from '../errors.js';
import {
  deleteClaimRef,
  type ClaimRemote,
  type DeleteOutcome,
  type SeenClaim,
} from './claim-refs.js';

export const PRUNE_AFTER_MS = 24 * 3600_000;

/** The done claims whose end is at least `olderThanMs` old on `wallNow`; pure. */
export function prunable(
  claims: readonly SeenClaim[],
  wallNow: number,
  olderThanMs = PRUNE_AFTER_MS,
): SeenClaim[] {
  return claims.filter(
    (c) => c.record?.state === 'done' && wallNow - c.record.renewedAt >= olderThanMs,
  );
}

export interface PruneResult {
  item: string;
  outcome: DeleteOutcome;
}

/** Deletes each claim's ref from the commit it was seen at, one after another. */
export async function pruneClaims(
  where: ClaimRemote,
  claims: readonly SeenClaim[],
): Promise<PruneResult[]> {
  const results: PruneResult[] = [];
  for (const claim of claims) {
    // One claim that cannot be deleted (a name git refuses) does not stop the others.
    const outcome = await deleteClaimRef(where, claim.item, claim.commit).catch(
      (error: unknown): DeleteOutcome => ({ kind: 'refused', message: messageOf(error) }),
    );
    results.push({ item: claim.item, outcome });
  }
  return results;
}
