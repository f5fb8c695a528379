/**
 * The tag locator: finds every real tag in a markdown string by its position in the source.
 * Pure: string in, occurrences out. `find`, every edit and the daemon use this one function,
 * so a swap can never touch a copy of a tag that `find` would not report.
 */
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkFrontmatter from 'remark-frontmatter';
import type { Nodes, Root } from 'mdast';
import { HASH_ATTACHED, NAME_CONTINUES, TAG_IN_TEXT } from './tag-name.js';
import { scanFrontMatterTags, type FrontMatterTag } from './front-matter.js';
import { LineIndex } from './line-index.js';

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
  problems: string[];
  lines: LineIndex;
}

const processor = unified()
  .use(remarkParse)
  .use(remarkGfm)
  .use(remarkFrontmatter, ['yaml', 'toml']);

/** Node types whose content is never a tag. */
const OPAQUE = new Set(['code', 'inlineCode', 'html', 'yaml', 'toml']);
const FRONT_MATTER = new Set(['yaml', 'toml']);
const TAGS_LINE = /^\*\*Tags\*\*:/;
/** Emphasis and strikethrough delimiters: markup, not text, where they border a text node. */
const DELIMITER = /[*_~]/;

/**
 * An autolink (`<https://x.com/a#b>`) or a GFM autolink literal (`https://x.com/a#b`): its text
 * is its destination, so nothing in it is a tag. A link written `[text](url)` starts with `[`.
 */
function isAutolink(text: string, node: Nodes): boolean {
  const start = node.position?.start.offset;
  return node.type === 'link' && start !== undefined && text[start] !== '[';
}

export function scanTags(text: string): TagScan {
  const tree = processor.parse(text) as Root;
  const lines = new LineIndex(text);
  const opaque: Array<[number, number]> = [];
  const prose: TagOccurrence[] = [];
  let h1EndLine: number | null = null;
  let frontMatter: FrontMatterTag[] = [];
  let frontMatterEnd: number | null = null;
  const problems: string[] = [];

  const visit = (node: Nodes): void => {
    const start = node.position?.start.offset;
    const end = node.position?.end.offset;
    if (OPAQUE.has(node.type) || isAutolink(text, node)) {
      if (start !== undefined && end !== undefined) opaque.push([start, end]);
      // TOML front matter (`+++`) carries no tags, but a created Tags line still goes below it.
      if (
        FRONT_MATTER.has(node.type) &&
        start !== undefined &&
        end !== undefined &&
        frontMatterEnd === null
      ) {
        frontMatterEnd = lines.endOfLineAt(end);
        if (node.type === 'yaml') {
          const scanned = scanFrontMatterTags(text, start, end);
          frontMatter = scanned.tags;
          problems.push(...scanned.problems);
        }
      }
      return;
    }
    if (node.type === 'text') {
      if (start !== undefined && end !== undefined)
        collectProseTags(text, start, end, lines, prose);
      return;
    }
    if ('children' in node) for (const child of node.children) visit(child as Nodes);
  };
  visit(tree);
  // The title is a top-level H1: one nested in a block quote or a list item is not the title.
  for (const child of tree.children) {
    const endOffset = child.position?.end.offset;
    if (child.type === 'heading' && child.depth === 1 && endOffset !== undefined) {
      h1EndLine = lines.lineOf(endOffset);
      break;
    }
  }

  const tagsLine = findTagsLine(text, lines, opaque);
  const occurrences: TagOccurrence[] = [
    ...frontMatter.map((entry) => ({
      ...entry,
      ...lines.position(entry.start),
      place: 'front-matter' as const,
    })),
    ...prose.map((entry) =>
      tagsLine && entry.start >= tagsLine.start && entry.end <= tagsLine.end
        ? { ...entry, place: 'tags-line' as const }
        : entry,
    ),
  ];
  return { occurrences, tagsLine, h1EndLine, frontMatterEnd, problems, lines };
}

function collectProseTags(
  text: string,
  start: number,
  end: number,
  lines: LineIndex,
  into: TagOccurrence[],
): void {
  const slice = text.slice(start, end);
  for (const match of slice.matchAll(TAG_IN_TEXT)) {
    const at = start + (match.index ?? 0);
    const after = at + match[0].length;
    if (!isTagBoundary(text, at, after, start, end)) continue;
    into.push({
      tag: match[0],
      start: at,
      end: after,
      ...lines.position(at),
      place: 'prose',
      bare: false,
    });
  }
}

/**
 * True when the `#` at `at` begins a tag that ends at `after` (not attached, not escaped).
 * `from`/`to` bound the text node holding it: a character outside them is markup, so emphasis
 * delimiters there are looked through (`_#needs-x_` is a tag, `**foo**#bar` is attached) and a
 * backslash there escapes nothing.
 */
export function isTagBoundary(
  text: string,
  at: number,
  after: number,
  from = 0,
  to = text.length,
): boolean {
  let left = at;
  if (at === from) while (left > 0 && DELIMITER.test(text[left - 1] as string)) left--;
  const before = charBefore(text, left);
  if (before !== undefined && HASH_ATTACHED.test(before)) return false;
  let right = after;
  if (after === to) while (right < text.length && DELIMITER.test(text[right] as string)) right++;
  const next = charAt(text, right);
  if (next !== undefined && NAME_CONTINUES.test(next)) return false;
  let backslashes = 0;
  for (let i = at - 1; i >= from && text[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 0;
}

/** The whole character (a surrogate pair counts as one) ending at `offset`. */
function charBefore(text: string, offset: number): string | undefined {
  if (offset <= 0) return undefined;
  const low = text.charCodeAt(offset - 1);
  if (offset >= 2 && low >= 0xdc00 && low <= 0xdfff) {
    const high = text.charCodeAt(offset - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(offset - 2, offset);
  }
  return text[offset - 1];
}

/** The whole character (a surrogate pair counts as one) starting at `offset`. */
function charAt(text: string, offset: number): string | undefined {
  const code = text.codePointAt(offset);
  return code === undefined ? undefined : String.fromCodePoint(code);
}

function findTagsLine(
  text: string,
  lines: LineIndex,
  opaque: Array<[number, number]>,
): LineSpan | null {
  for (let line = 1; line <= lines.count; line++) {
    const span = lines.span(line);
    if (!TAGS_LINE.test(text.slice(span.start, span.start + 9))) continue;
    if (opaque.some(([from, to]) => span.start >= from && span.start < to)) continue;
    return span;
  }
  return null;
}
