/**
 * The request text as the agent was asked it, without the lines the lifecycle itself changes: a
 * resumed conversation continues only a request whose text is still the one it was asked. Each
 * claim records the digest of its request (`requestDigest` in `.state.json`); the next attempt
 * resumes only when its own digest is the same.
 *
 * Ignored, and only these, each found by the tag locator (so never inside code):
 * - the item's tags: on the Tags line and in front matter `tags:` (the line keeps its other text;
 *   a front matter list entry left empty goes);
 * - the daemon's `**Session**:` lines (and the blank line a claim adds below one of its own);
 * - `## Recovery` sections: the heading and the `*   **Key**: value` entries and blank lines after
 *   it, and the blank lines a requeue puts before it.
 * Line endings count as `\n`, and trailing whitespace at the end of the text is ignored (a requeue
 * trims it before appending its entry).
 */
import { createHash } from 'node:crypto';
import { sessionLines } from './lifecycle-edits.js';
import { RECOVERY_HEADING } from './recovery-sections.js';
import { scanTags, type TagScan } from './scan-tags.js';

/** A line of a Recovery entry as the requeue writes it: `*   **Reason**: ...`. */
const RECOVERY_ENTRY = /^\*\s+\*\*[^*]+\*\*:/;
const BLANK = /^[ \t]*$/;
/** What stays of a carrier line once its tags are gone and that is only layout. */
const TAG_LAYOUT = /[\s,'"[\]-]/g;

/** The normalised request text (see the module comment); `scan` is the text's. Pure. */
export function normalisedRequest(text: string, scan: TagScan = scanTags(text)): string {
  const { lines } = scan;
  const dropped = new Set<number>();
  const replaced = new Map<number, string>();

  const carriers = scan.occurrences.filter((o) => o.place !== 'prose');
  for (const line of new Set(carriers.map((o) => o.line))) {
    const span = lines.span(line);
    let kept = '';
    let at = span.start;
    for (const o of carriers.filter((c) => c.line === line)) {
      kept += text.slice(at, o.start);
      at = o.end;
    }
    kept = (kept + text.slice(at, span.end)).replace(TAG_LAYOUT, '');
    if (kept === '') dropped.add(line);
    else replaced.set(line, kept);
  }

  for (const span of sessionLines(scan)) {
    dropped.add(span.line);
    const belowTags = scan.tagsLine !== null && scan.tagsLine.line === span.line - 1;
    if (!belowTags && span.line < lines.count && BLANK.test(lines.lineText(span.line + 1)))
      dropped.add(span.line + 1);
  }

  for (let line = 1; line <= lines.count; line++) {
    if (!RECOVERY_HEADING.test(lines.lineText(line)) || !scan.isProse(line)) continue;
    for (let before = line - 1; before >= 1 && BLANK.test(lines.lineText(before)); before--)
      dropped.add(before);
    dropped.add(line);
    let next = line + 1;
    while (next <= lines.count) {
      const body = lines.lineText(next);
      if (!BLANK.test(body) && !RECOVERY_ENTRY.test(body)) break;
      dropped.add(next++);
    }
    line = next - 1;
  }

  const out: string[] = [];
  for (let line = 1; line <= lines.count; line++) {
    if (dropped.has(line)) continue;
    out.push(replaced.get(line) ?? lines.lineText(line));
  }
  return out.join('\n').trimEnd();
}

/** `sha256:<hex>` of the normalised request text; `scan` is the text's. */
export function requestDigest(text: string, scan: TagScan = scanTags(text)): string {
  return `sha256:${createHash('sha256').update(normalisedRequest(text, scan)).digest('hex')}`;
}
