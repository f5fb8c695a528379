/**
 * The `## Recovery` entries of a request, read back: which failure each records and, for an
 * item sent back to `#delegated-X`, the time before which it is not claimed again. Only entries
 * outside code count. An entry without a `**Failure**:` line (written before it existed) is an
 * agent failure, an attempt.
 */
import { recoverySections } from './recovery-sections.js';
import { scanTags, type TagScan } from './scan-tags.js';

/**
 * `agent`: the agent ran and failed (an attempt); the others are not the item's failure:
 * `cancelled` by a human (`engine cancel`), and `none`, a human's retry (`engine retry`), which
 * ends a run of failures in a row and clears the Not Before of the entries above it.
 */
export const FAILURE_KINDS = ['agent', 'usage-limit', 'launch', 'cancelled', 'none'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface RecoveryRecord {
  failure: FailureKind;
  /** Not claimed again before this time; null when the entry names none. */
  notBefore: Date | null;
  /** Its `**Reason**:`, as written (tags in code spans); absent when the entry has none. */
  reason?: string;
  /**
   * The tag its `**Action**:` sent the item back to (`#needs-fix`: to a human, the daemon gave
   * up on it; `#delegated-fix`: a retry); absent when the entry names none.
   */
  to?: string;
}

const FAILURE = /^\*\s+\*\*Failure\*\*:\s*([a-z-]+)/;
const NOT_BEFORE = /^\*\s+\*\*Not Before\*\*:\s*(\S+)\s*$/;
const REASON = /^\*\s+\*\*Reason\*\*:\s*(.*?)\s*$/;
/** `Back to `#delegated-fix`, ...` and `Re-queued for processing (back to `#needs-fix`, ...)`, with or without the code span of older entries. */
const ACTION_TO = /^\*\s+\*\*Action\*\*:.*?\bback to `*(#[A-Za-z0-9][A-Za-z0-9-]*)/i;

/** Whether a failure of this kind is one of the item's attempts. */
export function countsAsAttempt(failure: FailureKind): boolean {
  return failure === 'agent';
}

/** The request's Recovery entries, in file order. */
export function recoveryRecords(text: string): RecoveryRecord[] {
  return recoveryRecordsOf(scanTags(text));
}

/** The Recovery entries of a text already scanned. */
export function recoveryRecordsOf(scan: TagScan): RecoveryRecord[] {
  return recoverySections(scan.lines, scan.isProse).map(({ body }) => {
    const record: RecoveryRecord = { failure: 'agent', notBefore: null };
    for (const line of body) {
      const value = scan.lines.lineText(line);
      const failure = FAILURE.exec(value)?.[1];
      if (failure !== undefined && (FAILURE_KINDS as readonly string[]).includes(failure))
        record.failure = failure as FailureKind;
      const notBefore = NOT_BEFORE.exec(value)?.[1];
      if (notBefore !== undefined && Number.isFinite(Date.parse(notBefore)))
        record.notBefore = new Date(notBefore);
      const reason = REASON.exec(value)?.[1];
      if (reason !== undefined) record.reason = reason;
      const to = ACTION_TO.exec(value)?.[1];
      if (to !== undefined) record.to = to;
    }
    return record;
  });
}

/** The attempts an item has had and failed: its Recovery entries that count as attempts. */
export function attemptsSoFar(records: RecoveryRecord[]): number {
  return records.filter((r) => countsAsAttempt(r.failure)).length;
}

/** Failures of one kind in a row at the end: a bound on the requeues that are no attempt. */
export function failuresInARow(records: RecoveryRecord[], kind: FailureKind): number {
  let count = 0;
  for (let i = records.length - 1; i >= 0 && records[i]!.failure === kind; i--) count++;
  return count;
}
