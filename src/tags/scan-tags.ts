/**
 * The tag locator: finds every real tag in a markdown string by its position in the source.
 * Pure: string in, occurrences out. `find`, every edit and the daemon use this one function,
 * so a swap can never touch a copy of a tag that `find` would not report.
 *
 * Two implementations decide the same thing: a one-pass fast path for the common shapes of
 * request files (scan-fast), and remark for everything else (scan-remark). The fast path returns
 * null whenever it cannot decide exactly; a differential test keeps it equal to remark. Both
 * leave out the tags of a Recovery entry's field lines, engine's record (recovery-sections).
 */
import { scanTagsFast } from './scan-fast.js';
import { scanTagsWithRemark } from './scan-remark.js';
import type { TagScan } from './tag-scan-types.js';

export { isTagBoundary } from './tag-boundary.js';
export type { LineSpan, ScanProblem, TagOccurrence, TagPlace, TagScan } from './tag-scan-types.js';

export function scanTags(text: string): TagScan {
  return scanTagsFast(text) ?? scanTagsWithRemark(text);
}

/**
 * A line that means to be the Tags line but may not be one: the locator reads only a line
 * starting with `**Tags**:` (docs/TAGS.md), so `Tags:`, `**Tags:**`, `*Tags*:` or an indented one
 * are prose. Tags the locator found in prose on such a line are on one it does not read as the
 * Tags line (not the first, or not written `**Tags**:`).
 */
export function looksLikeTagsLine(line: string): boolean {
  return LOOKS_LIKE_TAGS_LINE.test(line);
}

const LOOKS_LIKE_TAGS_LINE = /^\s*(?:\*{1,2}|_{1,2})?tags(?:\*{1,2}|_{1,2})?\s*:/i;
