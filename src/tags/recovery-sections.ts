/**
 * Where a request's `## Recovery` entries are, by line: the one reading of them, shared by the
 * reader of the entries (recovery-entries) and by both tag locators, which leave out the tags of
 * an entry's field lines (docs/TAGS.md, "Tags in engine's own lines"). Below the locator, so it
 * takes the lines and what is prose rather than a scan.
 */
import type { LineIndex } from './line-index.js';
import type { TagOccurrence } from './tag-scan-types.js';

/** A Recovery section's heading, as the requeue writes it. */
export const RECOVERY_HEADING = /^## Recovery[ \t]*$/;
const HEADING = /^#{1,6}[ \t]/;
/** The fields a requeue writes, one line each (`*   **Reason**: ...`). */
const FIELD_LINE = /^\*\s+\*\*(?:Date|Reason|Prior Session|Action|Failure|Not Before|Attempt)\*\*:/;

export interface RecoverySection {
  /** The line of its `## Recovery` heading. */
  heading: number;
  /** Its prose lines, up to the next heading. */
  body: number[];
}

/** The Recovery sections, in file order; only lines outside code, HTML and front matter count. */
export function recoverySections(
  lines: LineIndex,
  isProse: (line: number) => boolean,
): RecoverySection[] {
  const sections: RecoverySection[] = [];
  let current: RecoverySection | null = null;
  for (let line = 1; line <= lines.count; line++) {
    if (!isProse(line)) continue;
    const value = lines.lineText(line);
    if (RECOVERY_HEADING.test(value)) {
      current = { heading: line, body: [] };
      sections.push(current);
    } else if (HEADING.test(value)) {
      current = null;
    } else if (current !== null) {
      current.body.push(line);
    }
  }
  return sections;
}

/**
 * The occurrences without those on a Recovery entry's field lines: engine's record of a failure,
 * not tags. Entries written before their fields quoted tags (`without marking #done-fix`) would
 * otherwise make a failed item read as done.
 */
export function withoutRecordTags(
  text: string,
  occurrences: TagOccurrence[],
  lines: LineIndex,
  isProse: (line: number) => boolean,
): TagOccurrence[] {
  if (!text.includes('## Recovery') || !occurrences.some((o) => o.place === 'prose')) {
    return occurrences;
  }
  const fieldLines = new Set<number>();
  for (const { body } of recoverySections(lines, isProse)) {
    for (const line of body) if (FIELD_LINE.test(lines.lineText(line))) fieldLines.add(line);
  }
  return occurrences.filter((o) => o.place !== 'prose' || !fieldLines.has(o.line));
}
