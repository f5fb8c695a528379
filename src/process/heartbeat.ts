/** Heartbeats decide liveness where /proc cannot: for a session recorded on another host. */

/** ISO 8601 with a date, a time and a zone (what `Date.toISOString()` writes). */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * True when the last heartbeat is older than `staleAfterMs` at `now`. A missing heartbeat, or one
 * that is not an ISO timestamp with a zone (a zoneless one would be read in local time), counts as
 * stale. A heartbeat in the future (clock skew between hosts) is not stale.
 */
export function isHeartbeatStale(
  lastHeartbeatIso: string | null | undefined,
  now: Date,
  staleAfterMs: number,
): boolean {
  if (!Number.isFinite(staleAfterMs) || staleAfterMs < 0) {
    throw new RangeError(`staleAfterMs must be a finite number >= 0, got ${staleAfterMs}`);
  }
  const nowMs = now.getTime();
  if (Number.isNaN(nowMs)) throw new RangeError('now is an invalid Date');
  if (lastHeartbeatIso === undefined || lastHeartbeatIso === null) return true;
  const text = lastHeartbeatIso.trim();
  if (!ISO_TIMESTAMP.test(text)) return true;
  const beatMs = Date.parse(text);
  if (Number.isNaN(beatMs)) return true;
  return nowMs - beatMs > staleAfterMs;
}
