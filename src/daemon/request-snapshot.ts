/**
 * What the daemon's read stage takes of a request file, once per read: its items, each with its
 * readiness and the snapshot it travels with to admission and launch.
 */
import type { Blocker } from '../dispatch/depends-on.js';
import type { WorkItem } from '../dispatch/work-items.js';
import type { Readiness } from '../dispatch/work-order.js';

/**
 * What one read took of a request, once: it travels with the item to admission and launch, and
 * the claim is made only over this same text (else the file is read again).
 */
export interface RequestSnapshot {
  text: string;
  /** requestDigest of the text, for the resume plan. */
  digest: string;
  /** Attempts its Recovery entries record. */
  attempts: number;
  /** The last Recovery entry's Prior Session, or null. */
  priorSession: string | null;
  /** The session its `**Session**:` line names, or null. */
  session: string | null;
  /** Its `**Depends On**:` entries, as written: checked again right before the claim. */
  dependsOn: string[];
}

/**
 * A work item as read, with when it may be claimed, what holds it after the requests it depends
 * on (none: free), and what it was read from.
 */
export type PlannedItem = WorkItem & Readiness & { blockers: Blocker[]; snapshot: RequestSnapshot };

/** What one read of a request file says of its items. */
export interface FileRead {
  /** Its real path: the key of its items. */
  file: string;
  /** Its `#delegated-X` items with a dispatchable row, each with its readiness. */
  items: PlannedItem[];
  /** The nouns it claims (`#claimed-X`). */
  claims: string[];
  /** Its `#delegated-X` items the table in force does not dispatch, and why. */
  unrouted: Array<{ noun: string; why: string }>;
}
