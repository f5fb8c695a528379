/**
 * The daemon's transitions of a request file, as pure edits composed from the tag edits:
 * claim (`#delegated-X` → `#claimed-X` plus the `**Session**:` line, one write) and requeue
 * (`#claimed-X` → `#needs-X` plus a `## Recovery` entry, one write). Each checks its
 * precondition on the text it is given, so inside the compare-and-swap writer it is atomic.
 */
import { carrierTags, lineEnding, swapTags, TagMissingError, applySplices } from './edit-tags.js';
import { LineIndex } from './line-index.js';
import { scanTags } from './scan-tags.js';
import { lifecycleOf, lifecycleTag } from './tag-name.js';

/** The first `**Session**:` line; its value without surrounding blanks (or a CR). */
const SESSION_LINE = /^\*\*Session\*\*:[ \t]*(.*?)[ \t]*\r?$/m;

/**
 * The session a claim points at: the first line that starts with `**Session**:`. The claim writes
 * it directly below the Tags line; found anywhere, so a line an agent inserts in between does not
 * orphan the claim. A plain line search: the poller reads it every second without parsing.
 */
export function sessionReference(text: string): string | null {
  return SESSION_LINE.exec(text)?.[1] || null;
}

function sessionLineNumber(text: string): number | null {
  const match = SESSION_LINE.exec(text);
  return match ? new LineIndex(text).lineOf(match.index) : null;
}

/** Sets (or with null, removes) the `**Session**:` line below the Tags line. */
function withSessionLine(text: string, session: string | null): string {
  const scan = scanTags(text);
  const existing = sessionLineNumber(text);
  const eol = lineEnding(text);
  if (existing !== null) {
    const span = scan.lines.span(existing);
    if (session === null) {
      const end = scan.lines.endOfLineAt(span.end + 1);
      return applySplices(text, [{ start: span.start, end, insert: '' }]);
    }
    return applySplices(text, [
      { start: span.start, end: span.end, insert: `**Session**: ${session}` },
    ]);
  }
  if (session === null || !scan.tagsLine) return text;
  const at = scan.lines.endOfLineAt(scan.tagsLine.end + 1);
  const needsBreak = at === text.length && !text.endsWith('\n');
  return applySplices(text, [
    { start: at, end: at, insert: `${needsBreak ? eol : ''}**Session**: ${session}${eol}` },
  ]);
}

/** `#delegated-X` → `#claimed-X` and the Session line, or TagMissingError when not delegated. */
export function claimEdit(text: string, noun: string, session: string): string {
  // One claim per request file: a second noun waits until the first is done or requeued (the
  // file then changes, and is read again), so the one Session line always names the one claim.
  const claimed = carrierTags(scanTags(text)).find((o) => lifecycleOf(o.tag)?.state === 'claimed');
  if (claimed) throw new TagMissingError([lifecycleTag('delegated', noun)], undefined, true);
  const swapped = swapTags(text, [lifecycleTag('delegated', noun)], lifecycleTag('claimed', noun));
  return withSessionLine(ensureTagsLine(swapped), session);
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
}

/**
 * `#claimed-X` → `#needs-X`, drops the Session line and appends a `## Recovery` entry. Refuses
 * (TagMissingError) unless the file is still claimed by `session`, so a newer claim is never
 * requeued by mistake.
 */
export function requeueEdit(
  text: string,
  noun: string,
  session: string,
  entry: RecoveryEntry,
): string {
  const claimed = lifecycleTag('claimed', noun);
  if (sessionReference(text) !== session) throw new TagMissingError([claimed], undefined, true);
  const swapped = swapTags(text, [claimed], lifecycleTag('needs', noun));
  const cleared = withSessionLine(swapped, null);
  const eol = lineEnding(text);
  const body = [
    '## Recovery',
    `*   **Date**: ${entry.date}`,
    `*   **Reason**: ${entry.reason}`,
    `*   **Prior Session**: ${entry.priorSession}`,
    '*   **Action**: Re-queued for processing (back to #needs-' +
      noun +
      ', approve again to retry)',
    `*   **Attempt**: ${entry.attempt}`,
  ].join(eol);
  const trimmed = cleared.replace(/(\r?\n)*$/, '');
  return `${trimmed}${eol}${eol}${body}${eol}`;
}

/** How many times this request was requeued before: the number of `## Recovery` headings. */
export function recoveryCount(text: string): number {
  return text.split(/\r?\n/).filter((line) => /^## Recovery\s*$/.test(line)).length;
}

/** The last recorded prior session, if the request was requeued before. */
export function lastPriorSession(text: string): string | null {
  const matches = [...text.matchAll(/^\*\s+\*\*Prior Session\*\*:\s*(.+?)\s*$/gm)];
  return matches.length > 0 ? (matches[matches.length - 1]?.[1] ?? null) : null;
}

/** Claims on front matter only have no Tags line to hang the Session line on: create one. */
function ensureTagsLine(text: string): string {
  const scan = scanTags(text);
  if (scan.tagsLine) return text;
  const fm = carrierTags(scan);
  if (fm.length === 0) return text;
  const eol = lineEnding(text);
  const at = scan.frontMatterEnd ?? 0;
  return applySplices(text, [{ start: at, end: at, insert: `**Tags**:${eol}` }]);
}
