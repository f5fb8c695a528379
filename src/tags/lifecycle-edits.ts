/**
 * The daemon's transitions of a request file, as pure edits composed from the tag edits:
 * claim (`#delegated-X` → `#claimed-X` plus the `**Session**:` line, one write) and requeue
 * (`#claimed-X` → `#needs-X` plus a `## Recovery` entry, one write). Each checks its
 * precondition on the text it is given, so inside the compare-and-swap writer it is atomic.
 */
import {
  applySplices,
  carrierTags,
  checked,
  EditChangesMeaningError,
  lineEnding,
  swapTags,
  TagMissingError,
  TwoStatesError,
} from './edit-tags.js';
import { scanTags, type LineSpan, type TagScan } from './scan-tags.js';
import { proseText } from './engine-prose.js';
import {
  attemptsSoFar,
  countsAsAttempt,
  recoveryRecordsOf,
  type FailureKind,
} from './recovery-entries.js';
import { lifecycleOf, lifecycleTag, nounsWithTwoStates, transitionTags } from './tag-name.js';

const SESSION_PREFIX = '**Session**:';
/** What the daemon writes after the prefix: a session directory under `sessions/`. */
const SESSION_REF = /^sessions\/\S+$/;
const PRIOR_SESSION = /^\*\s+\*\*Prior Session\*\*:\s*(.+?)\s*$/;

/**
 * The lines of the daemon's own records that the locator puts outside code: a `**Session**:`
 * line shown as an example inside a fence is never the claim's, and never edited.
 */
function proseLines(scan: TagScan, test: (line: string) => boolean): LineSpan[] {
  const found: LineSpan[] = [];
  for (let line = 1; line <= scan.lines.count; line++) {
    if (test(scan.lines.lineText(line)) && scan.isProse(line)) found.push(scan.lines.span(line));
  }
  return found;
}

/** The session a line names, when it is one of the daemon's `**Session**:` lines. */
function sessionValue(line: string): string | null {
  if (!line.startsWith(SESSION_PREFIX)) return null;
  const value = line.slice(SESSION_PREFIX.length).trim();
  return SESSION_REF.test(value) ? value : null;
}

/**
 * The claims' `**Session**:` lines: outside code, naming a session directory (a human's
 * `**Session**: cookie expires` is text, never the claim's). The claim writes one directly below
 * the Tags line; found anywhere, so a line an agent inserts in between does not orphan it.
 */
export function sessionLines(scan: TagScan): LineSpan[] {
  return proseLines(scan, (line) => sessionValue(line) !== null);
}

function sessionLine(scan: TagScan): { span: LineSpan; value: string } | null {
  const span = sessionLines(scan)[0];
  if (!span) return null;
  return { span, value: sessionValue(scan.lines.lineText(span.line)) as string };
}

/** The session a claim points at (the first Session line), or null. */
export function sessionReference(text: string): string | null {
  return sessionReferenceOf(scanTags(text));
}

/** The same, from a scan already made (the daemon's is made off the main thread). */
export function sessionReferenceOf(scan: TagScan): string | null {
  return sessionLine(scan)?.value ?? null;
}

/**
 * Sets (or with null, removes) the `**Session**:` line: below the Tags line; without one (tags in
 * front matter only), where a new Tags line would go (docs/TAGS.md), as a paragraph of its own,
 * so that removing it gives back the file as it was.
 */
function withSessionLine(text: string, session: string | null): string {
  const scan = scanTags(text);
  const existing = sessionLine(scan);
  const eol = lineEnding(text);
  if (existing) {
    const { span } = existing;
    if (session !== null) {
      return applySplices(text, [
        { start: span.start, end: span.end, insert: `${SESSION_PREFIX} ${session}` },
      ]);
    }
    // Every Session line goes: a stale copy left below would name a claim that no longer is.
    return applySplices(
      text,
      sessionLines(scan).map((line) => sessionLineRemoval(text, scan, line)),
    );
  }
  if (session === null) return text;
  const line = `${SESSION_PREFIX} ${session}`;
  if (scan.tagsLine) {
    const at = scan.lines.endOfLineAt(scan.tagsLine.end + 1);
    const needsBreak = at === text.length && !text.endsWith('\n');
    return applySplices(text, [
      { start: at, end: at, insert: `${needsBreak ? eol : ''}${line}${eol}` },
    ]);
  }
  return applySplices(text, [ownParagraphInsertion(text, scan, line)]);
}

/** After the H1 (or the front matter, or at the top), past one blank line, then a blank line. */
function ownParagraphInsertion(
  text: string,
  scan: TagScan,
  line: string,
): { start: number; end: number; insert: string } {
  const eol = lineEnding(text);
  let at =
    scan.h1EndLine !== null
      ? scan.lines.endOfLineAt(scan.lines.span(scan.h1EndLine).end + 1)
      : (scan.frontMatterEnd ?? 0);
  if (at > 0 && at === text.length && !text.endsWith('\n')) {
    return { start: at, end: at, insert: `${eol}${line}` };
  }
  const blank = /^[ \t]*\r?\n/.exec(text.slice(at));
  if (blank) at += blank[0].length;
  const rest = text.slice(at);
  const insert = `${line}${eol}${rest.length > 0 ? eol : ''}`;
  return { start: at, end: at, insert };
}

/**
 * The bytes of the Session line to remove: the line, and the blank line below it when the claim
 * made it a paragraph of its own (not directly below the Tags line).
 */
function sessionLineRemoval(
  text: string,
  scan: TagScan,
  span: LineSpan,
): { start: number; end: number; insert: string } {
  const lines = scan.lines;
  const last = span.line === lines.count;
  if (last && !text.endsWith('\n') && span.line > 1) {
    // The claim started this line at the end of a file without a final newline.
    return { start: lines.span(span.line - 1).end, end: text.length, insert: '' };
  }
  let end = lines.endOfLineAt(span.end + 1);
  const belowTags = scan.tagsLine !== null && scan.tagsLine.line === span.line - 1;
  if (!belowTags && !last && /^[ \t]*$/.test(lines.lineText(span.line + 1))) {
    end = lines.endOfLineAt(lines.span(span.line + 1).end + 1);
  }
  return { start: span.start, end, insert: '' };
}

/** `#delegated-X` → `#claimed-X` and the Session line, or TagMissingError when not delegated. */
export function claimEdit(text: string, noun: string, session: string): string {
  // One claim per request file: a second noun waits until the first is done or requeued (the
  // file then changes, and is read again), so the one Session line always names the one claim.
  const carrier = carrierTags(scanTags(text));
  const claimed = carrier.find((o) => lifecycleOf(o.tag)?.state === 'claimed');
  const { from, to } = transitionTags('claim', noun);
  if (claimed) throw new TagMissingError([from], undefined, true);
  // Never dispatched (work-items); refused here too, should a claim race a hand edit.
  const twice = nounsWithTwoStates(carrier.map((o) => o.tag))[0];
  if (twice) throw new TwoStatesError(twice.tags, twice.tags, null);
  const swapped = swapTags(text, [from], to);
  return checkedLifecycle(swapped, withSessionLine(swapped, session), session);
}

/**
 * The postcondition of a claim or requeue, whose swap already checked its own: writing or
 * removing the Session line changed no tag (`swapped` is the text after the swap), and the
 * Session line (or its absence) is the claim's own, outside code.
 */
function checkedLifecycle(swapped: string, result: string, session: string | null): string {
  const scan = scanTags(swapped);
  const line = scan.tagsLine?.line ?? 1;
  checked(result, scan.occurrences.map((o) => `${o.place} ${o.tag}`).sort(), line);
  if (sessionReference(result) !== session) throw new EditChangesMeaningError(line);
  return result;
}

/**
 * Puts a claim back after an editor saved an older copy over it (`#delegated-X` again while
 * the claim's agent lives): the same edit as a claim, pointing at the live session.
 */
export const restoreClaimEdit = claimEdit;

export interface RecoveryEntry {
  date: string;
  reason: string;
  priorSession: string;
  attempt: number;
  /** Where the item goes: `#needs-X` (a human decides) unless told `delegated` (a retry). */
  back?: 'needs' | 'delegated';
  /** What failed (`**Failure**:`, read back by recovery-entries.ts); absent: an agent failure. */
  failure?: FailureKind;
  /** Not claimed again before this ISO time (`**Not Before**:`). */
  notBefore?: string | null;
}

/**
 * `#claimed-X` → `#needs-X`, drops the Session line and appends a `## Recovery` entry. Refuses
 * (TagMissingError) unless the file is still claimed by `session`, so a newer claim is never
 * requeued by mistake. A `cancelled` entry is a human's cancel (`cancelEdit`).
 */
export function requeueEdit(
  text: string,
  noun: string,
  session: string,
  entry: RecoveryEntry,
): string {
  const transition = entry.failure === 'cancelled' ? 'cancel' : 'requeue';
  const { from: claimed, to: needs } = transitionTags(transition, noun);
  const to = entry.back === 'delegated' ? lifecycleTag('delegated', noun) : needs;
  if (sessionReference(text) !== session) throw new TagMissingError([claimed], undefined, true);
  const swapped = swapTags(text, [claimed], to);
  const cleared = checkedLifecycle(swapped, withSessionLine(swapped, null), null);
  const eol = lineEnding(text);
  const body = [
    '## Recovery',
    field('Date', entry.date),
    field('Reason', entry.reason),
    field('Prior Session', entry.priorSession),
    field('Action', actionOf(entry, to)),
    ...(entry.failure === undefined
      ? []
      : [
          field(
            'Failure',
            `${entry.failure}${countsAsAttempt(entry.failure) ? '' : ' (not an attempt)'}`,
          ),
        ]),
    ...(entry.notBefore ? [field('Not Before', entry.notBefore)] : []),
    field('Attempt', String(entry.attempt)),
  ].join(eol);
  return withRecoveryEntry(cleared, body, eol);
}

function actionOf(entry: RecoveryEntry, to: string): string {
  if (entry.failure === 'cancelled')
    return `Cancelled by hand (back to ${to}; engine retry, or an approval, dispatches it again)`;
  return entry.back === 'delegated'
    ? `Back to ${to}, dispatched again without a new approval`
    : `Re-queued for processing (back to ${to}, approve again to retry)`;
}

/**
 * `engine cancel`: `#claimed-X` → `#needs-X` while `session` still holds the claim, with a
 * Recovery entry whose reason is `cancelled` (not an attempt: a human stopped it).
 */
export function cancelEdit(text: string, noun: string, session: string, date: Date): string {
  return requeueEdit(text, noun, session, {
    date: date.toISOString(),
    reason: 'cancelled',
    priorSession: `${session}/`,
    attempt: attemptsSoFar(recoveryRecordsOf(scanTags(text))) + 1,
    back: 'needs',
    failure: 'cancelled',
  });
}

/**
 * `engine retry`: `#needs-X` → `#delegated-X` (`stays`: the item is `#delegated-X` already and
 * stays so), and, for an item that has Recovery entries, one more: the human's retry, failure
 * `none`, with no Not Before, so the readiness rule (the last entry's Not Before) holds it no
 * longer and the failures in a row start again. Refuses (TagMissingError) when the tag is not
 * there.
 */
export function retryEdit(text: string, noun: string, date: Date, stays: boolean): string {
  const { from: needs, to: delegated } = transitionTags('retry', noun);
  const scan = scanTags(text);
  const expected = stays ? delegated : needs;
  if (!carrierTags(scan).some((o) => o.tag === expected))
    throw new TagMissingError([expected], undefined, true);
  const swapped = stays ? text : swapTags(text, [needs], delegated);
  if (recoveryRecordsOf(scan).length === 0) return swapped;
  const eol = lineEnding(text);
  const body = [
    '## Recovery',
    field('Date', date.toISOString()),
    field('Reason', 'retried by hand (engine retry)'),
    field('Action', `Back to ${delegated} by a human, claimed without waiting for a backoff`),
    field('Failure', 'none (not an attempt)'),
  ].join(eol);
  return withRecoveryEntry(swapped, body, eol);
}

/**
 * One field of a Recovery entry. Its value goes through proseText: a reason quotes tags, paths
 * and error messages, and none of it may become a tag (the stale-marker failure: a requeued item
 * that reads as `#done-X`).
 */
function field(name: string, value: string): string {
  return `*   **${name}**: ${proseText(value)}`;
}

/**
 * The text with a Recovery entry after it. A text that ends inside a block running to its end (a
 * code fence never closed, an HTML comment) would swallow the entry, and trimming its trailing
 * lines would change its bytes: the entry then goes right before that block, which stays byte
 * for byte. Either way the entry must come out as prose (read back as one more Recovery entry),
 * or the edit is refused: an entry hidden in code would not count. The postcondition: the entry
 * adds no tag and changes none (front matter stays front matter, code stays code).
 */
function withRecoveryEntry(text: string, body: string, eol: string): string {
  const tags = (scan: TagScan): string =>
    scan.occurrences.map((o) => `${o.place} ${o.tag}`).join('\n');
  const scan = scanTags(text);
  const before = recoveryRecordsOf(scan).length;
  const counted = (result: string): boolean => {
    const after = scanTags(result);
    return recoveryRecordsOf(after).length === before + 1 && tags(after) === tags(scan);
  };
  let end = text.length;
  // Trailing line endings, by hand: the regex for it is quadratic on a long run of them.
  while (end > 0 && (text[end - 1] === '\n' || text[end - 1] === '\r')) end--;
  const appended = `${text.slice(0, end)}${eol}${eol}${body}${eol}`;
  if (counted(appended)) return appended;
  const { lines } = scan;
  // Never above the front matter's closing line: it must stay the file's first block.
  const top = scan.frontMatterEnd === null ? 1 : lines.lineOf(scan.frontMatterEnd);
  let first = lines.count;
  while (first > top && !scan.isProse(first - 1)) first--;
  const at = lines.span(first).start;
  const blankBefore = first === 1 || lines.lineText(first - 1).trim() === '' ? '' : eol;
  const inserted = `${text.slice(0, at)}${blankBefore}${body}${eol}${eol}${text.slice(at)}`;
  if (counted(inserted)) return inserted;
  throw new EditChangesMeaningError(first);
}

/** The last recorded prior session (outside code), if the request was requeued before. */
export function lastPriorSession(text: string): string | null {
  return lastPriorSessionOf(scanTags(text));
}

/** The same, from a scan already made. */
export function lastPriorSessionOf(scan: TagScan): string | null {
  const last = proseLines(scan, (line) => PRIOR_SESSION.test(line)).pop();
  return last ? (PRIOR_SESSION.exec(scan.lines.lineText(last.line))?.[1] ?? null) : null;
}
