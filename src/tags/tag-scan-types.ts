/**
 * What the tag locator returns. Its own module, below both scanners and scan-tags, so the
 * scanners and the helpers they share never import the locator that imports them.
 */
import type { LineIndex } from './line-index.js';

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
  /** The YAML front matter's `depends_on:` entries (read through tags/depends-on-line). */
  frontMatterDependsOn: string[];
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
