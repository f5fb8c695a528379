/**
 * The tag locator: finds every real tag in a markdown string by its position in the source.
 * Pure: string in, occurrences out. `find`, every edit and the daemon use this one function,
 * so a swap can never touch a copy of a tag that `find` would not report.
 *
 * Two implementations decide the same thing: a one-pass fast path for the common shapes of
 * request files (scan-fast), and remark for everything else (scan-remark). The fast path returns
 * null whenever it cannot decide exactly; a differential test keeps it equal to remark.
 */
import type { LineIndex } from './line-index.js';
import { scanTagsFast } from './scan-fast.js';
import { scanTagsWithRemark } from './scan-remark.js';

export { isTagBoundary } from './tag-boundary.js';

/** Where a tag sits: on the Tags line, in the front matter `tags:` key, or anywhere else in prose. */
export type TagPlace = 'tags-line' | 'front-matter' | 'prose';

export interface TagOccurrence {
  /** The tag with its `#`, e.g. `#needs-fix`. */
  tag: string;
  /** Source offsets of the tag as written (front matter entries may be written without `#`). */
  start: number;
  end: number;
  /** 1-based line and column of `start`. */
  line: number;
  column: number;
  place: TagPlace;
  /** Written without the `#` (a front matter entry such as `needs-fix`). */
  bare: boolean;
}

export interface LineSpan {
  /** 1-based line number. */
  line: number;
  /** Offset of the first character and of the end of the line's content (before its line ending). */
  start: number;
  end: number;
}

export interface TagScan {
  occurrences: TagOccurrence[];
  /** The first `**Tags**:` line outside code, if any. */
  tagsLine: LineSpan | null;
  /** The last line of the first level-1 heading, if any. */
  h1EndLine: number | null;
  /** The end offset of the front matter block (after its closing fence line), if any. */
  frontMatterEnd: number | null;
  /** Problems worth telling the user about (malformed front matter); the scan still succeeds. */
  problems: ScanProblem[];
  lines: LineIndex;
  /**
   * Whether line N starts outside code, HTML and front matter: only such a line can be one of the
   * daemon's own lines (`**Session**:`, `## Recovery`), so an example of one inside a fence is
   * never read or edited as one.
   */
  isProse(line: number): boolean;
}

export interface ScanProblem {
  /** 1-based line of the file the problem is on. */
  line: number;
  message: string;
}

export function scanTags(text: string): TagScan {
  return scanTagsFast(text) ?? scanTagsWithRemark(text);
}
