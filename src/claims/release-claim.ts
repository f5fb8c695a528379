/**
 * A person's release of a claim (`engine claims release`): the claim ref deleted by
 * compare-and-swap from the value just read, never blindly, so that a renewal or takeover landing
 * in between wins over the release. A held claim, whatever its record's age (the record's
 * clock is the holder's), or an unreadable one is released only when forced: its holder's next write is
 * then refused (the ref moved) and its work fenced. The shared branch is not touched.
 */
import { deleteClaimRef, fetchClaim, type ClaimRemote, type SeenClaim } from './claim-refs.js';
import { needsForce } from './claims-view.js';

/**
 * - `released`: the ref is gone.
 * - `absent`: the remote has no claim for the item (none, or another deleted it meanwhile).
 * - `live`: held (or unreadable), so it may be live; nothing done without `force`.
 * - `lost`: the ref moved since it was read (a renewal, a takeover): nothing done.
 * - `refused`, `unreachable`: the remote refused the delete, or could not be reached.
 */
export type ReleaseOutcome =
  | { kind: 'released' | 'live' | 'lost'; claim: SeenClaim }
  | { kind: 'absent' }
  | { kind: 'refused' | 'unreachable'; message: string };

export async function releaseClaim(
  where: ClaimRemote,
  item: string,
  { force }: { force: boolean },
): Promise<ReleaseOutcome> {
  const claim = await fetchClaim(where, item);
  if (claim === null) return { kind: 'unreachable', message: `cannot reach ${where.remote}` };
  if (claim === 'absent') return { kind: 'absent' };
  if (!force && needsForce(claim)) return { kind: 'live', claim };
  const outcome = await deleteClaimRef(where, item, claim.commit);
  if (outcome.kind === 'done') return { kind: 'released', claim };
  if (outcome.kind === 'lost') return { kind: 'lost', claim };
  if (outcome.kind === 'gone') return { kind: 'absent' };
  return outcome;
}
