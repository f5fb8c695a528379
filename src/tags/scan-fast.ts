/**
 * The fast path of the tag locator: one pass over the lines, no syntax tree. It decides the
 * shapes request files are made of (ATX headings, paragraphs, list items, fenced and indented
 * code, code spans, simple inline links, a Tags line, YAML or TOML front matter) exactly as the
 * remark locator does, and returns null for anything whose effect on tags it does not decide:
 * HTML and autolinks (`<`), block quotes, tables (`|`), images, reference definitions, footnotes,
 * setext H1s, tabs in indentation, fences inside list items, a code span that does not close on
 * its own line, emphasis touching a tag, a tag inside a URL-like word. remark then decides.
 *
 * Why: remark costs about 1 ms per 2 KB file and more to load; `find` over 50,000 files, the
 * daemon's start-up and every agent's `engine tag swap` would pay it. This path costs microseconds.
 * test/tags/scan-fast.test.ts holds it equal to remark (differential, fast-check).
 */
import { scanFrontMatter, type FrontMatterTag } from './front-matter.js';
import { LineIndex } from './line-index.js';
import { withoutRecordTags } from './recovery-sections.js';
import { DELIMITER, isTagBoundary, proseOccurrence } from './tag-boundary.js';
import { TAG_IN_TEXT } from './tag-name.js';
import type { LineSpan, ScanProblem, TagOccurrence, TagScan } from './tag-scan-types.js';

/** Thrown inside the pass when the text is outside what this path decides; never escapes. */
class Undecided extends Error {}

const ATX = /^(#{1,6})(?:[ \t]|$)/;
const FENCE_OPEN = /^(`{3,}|~{3,})(.*)$/;
const THEMATIC = /^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const SETEXT_H1 = /^=+[ \t]*$/;
const LIST_MARKER = /^(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)/;
const BLANK = /^[ \t]*$/;
/** The start of a block other than a paragraph (what may interrupt one inside a list item). */
const STARTS_BLOCK =
  /^(?:#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|[>=<_])/;
const TAGS_LINE_PREFIX = '**Tags**:';
/** Constructs that decide tags in ways this path does not follow (outside code spans). */
const UNDECIDED_INLINE = /[<|]|!\[|\[\^|\]:|\]\[/;
/** A word holding one of these may be a GFM autolink literal, whose text is never a tag. */
const URL_LIKE = /:\/\/|@|www\./i;
/** A simple inline link destination: no spaces, brackets, quotes, escapes or code. */
const SIMPLE_DESTINATION = /^[^\s()<>\\`"'[\]]*\)/;
/** More backtick runs or links on one line than this: let remark (with its time limit) decide. */
const MAX_RUNS_PER_LINE = 64;
/** Line content that is ambiguous (list content or indented code) and would matter either way. */
const AMBIGUOUS_MATTERS = /[#`~]/;

interface Fence {
  char: string;
  length: number;
}

export function scanTagsFast(text: string): TagScan | null {
  try {
    return scan(text);
  } catch (error) {
    if (error instanceof Undecided) return null;
    throw error;
  }
}

// One instance: an error's stack trace costs more than scanning a typical file.
const UNDECIDED = new Undecided();

function undecided(): never {
  throw UNDECIDED;
}

function scan(text: string): TagScan {
  // micromark reads a lone CR as a line ending and NUL as U+FFFD; LineIndex does neither.
  if (/\r(?!\n)|\0/.test(text) || text.startsWith('\uFEFF')) undecided();
  const lines = new LineIndex(text);
  const prose: TagOccurrence[] = [];
  let tagsLine: LineSpan | null = null;
  let h1EndLine: number | null = null;
  let frontMatter: FrontMatterTag[] = [];
  let frontMatterDependsOn: string[] = [];
  let frontMatterEnd: number | null = null;
  const problems: ScanProblem[] = [];
  const proseLines = new Set<number>();

  let first = 1;
  const matter = frontMatterBlock(text, lines);
  if (matter) {
    first = matter.closingLine + 1;
    const closing = lines.span(matter.closingLine);
    frontMatterEnd = lines.endOfLineAt(closing.end);
    if (matter.kind === 'yaml') {
      const scanned = scanFrontMatter(text, 0, closing.end);
      frontMatter = scanned.tags;
      frontMatterDependsOn = scanned.dependsOn;
      problems.push(...scanned.problems);
    }
  }

  let fence: Fence | null = null;
  let inList = false;
  let inParagraph = false;
  // After a line that is list content or indented code, deeper lines continue whichever it was.
  let ambiguous = false;
  /** `heading`: the line is a whole ATX heading, so no code span reaches past it. */
  const proseLine = (span: LineSpan, heading = false): void => {
    if (tagsLine === null && text.startsWith(TAGS_LINE_PREFIX, span.start)) tagsLine = span;
    proseLines.add(span.line);
    collectLineTags(text, span, heading, lines, prose);
  };

  for (let n = first; n <= lines.count; n++) {
    const span = lines.span(n);
    const line = text.slice(span.start, span.end);
    if (fence) {
      if (closesFence(line, fence)) fence = null;
      continue;
    }
    if (BLANK.test(line)) {
      inParagraph = false;
      continue;
    }
    const indentText = /^[ \t]*/.exec(line)?.[0] ?? '';
    if (indentText.includes('\t')) undecided();
    const indent = indentText.length;
    const rest = line.slice(indent);
    // A line at the margin that is neither a list item nor a lazy paragraph line ends every list.
    if (
      indent === 0 &&
      !LIST_MARKER.test(rest) &&
      (!inParagraph || STARTS_BLOCK.test(rest) || THEMATIC.test(rest))
    ) {
      inList = false;
    }
    let nested = false;
    if (indent < 4) ambiguous = false;
    else if (ambiguous && AMBIGUOUS_MATTERS.test(rest)) undecided();
    if (indent >= 4) {
      if (inParagraph) {
        // Indented code cannot interrupt a paragraph; inside a list item other blocks can.
        if (inList && (STARTS_BLOCK.test(rest) || THEMATIC.test(rest))) undecided();
        proseLine(span);
        continue;
      }
      if (!inList) continue; // indented code: never tags
      // Inside a list this is list content or indented code, depending on columns not followed here.
      if (AMBIGUOUS_MATTERS.test(rest)) undecided();
      nested = true;
      ambiguous = true;
    }
    const open = FENCE_OPEN.exec(rest);
    if (open) {
      const marker = open[1] as string;
      // Inside a list item a fence belongs to the item, and where it ends depends on columns.
      if (nested || (indent > 0 && inList)) undecided();
      if (marker[0] === '`' && (open[2] as string).includes('`')) undecided();
      fence = { char: marker[0] as string, length: marker.length };
      inParagraph = false;
      continue;
    }
    const atx = ATX.exec(rest);
    if (atx) {
      proseLine(span, true);
      if ((atx[1] as string).length === 1 && h1EndLine === null) {
        // A level-1 heading is the title only at the top level, not inside a list item.
        if (nested || (indent > 0 && inList)) undecided();
        h1EndLine = n;
      }
      inParagraph = false;
      continue;
    }
    if (SETEXT_H1.test(rest) || rest.startsWith('>')) undecided();
    if (THEMATIC.test(rest)) {
      inParagraph = false;
      continue;
    }
    if (LIST_MARKER.test(rest)) {
      inList = true;
      inParagraph = listItemContent(rest);
      proseLine(span);
      continue;
    }
    proseLine(span);
    inParagraph = true;
  }

  const occurrences = placed(frontMatter, prose, tagsLine, lines);
  const isProse = (line: number): boolean => proseLines.has(line);
  return {
    occurrences: withoutRecordTags(text, occurrences, lines, isProse),
    tagsLine,
    h1EndLine,
    frontMatterEnd,
    frontMatterDependsOn,
    problems,
    lines,
    isProse,
  };
}

/**
 * The front matter's tags, then the prose's, each with its place. Plain loops: spreads of mapped
 * arrays here made V8 deoptimize `scan` when an array's map changed from one file to the next,
 * and compile it again, 50 to 100 ms each (docs/BENCHMARKS.md).
 */
function placed(
  frontMatter: FrontMatterTag[],
  prose: TagOccurrence[],
  tagsLine: LineSpan | null,
  lines: LineIndex,
): TagOccurrence[] {
  const occurrences: TagOccurrence[] = [];
  for (let i = 0; i < frontMatter.length; i++) {
    const entry = frontMatter[i] as FrontMatterTag;
    occurrences.push({ ...entry, ...lines.position(entry.start), place: 'front-matter' });
  }
  for (let i = 0; i < prose.length; i++) {
    const entry = prose[i] as TagOccurrence;
    const inTagsLine =
      tagsLine !== null && entry.start >= tagsLine.start && entry.end <= tagsLine.end;
    occurrences.push(inTagsLine ? { ...entry, place: 'tags-line' } : entry);
  }
  return occurrences;
}

/**
 * The content after one or more list markers. True when it is paragraph text; false for an
 * empty item. Content that opens a block whose extent depends on columns is undecided.
 */
function listItemContent(rest: string): boolean {
  let content = rest;
  for (;;) {
    const marker = LIST_MARKER.exec(content);
    if (!marker) break;
    const after = content.slice(marker[0].length);
    if (BLANK.test(after)) return false;
    const spaces = /^[ \t]*/.exec(after)?.[0] ?? '';
    // Five or more spaces start indented code inside the item; tabs move columns.
    if (spaces.includes('\t') || spaces.length > 4) undecided();
    content = after.slice(spaces.length);
    if (THEMATIC.test(content)) return false;
  }
  if (FENCE_OPEN.test(content) || content.startsWith('>') || SETEXT_H1.test(content)) undecided();
  return !ATX.test(content);
}

function closesFence(line: string, fence: Fence): boolean {
  const match = /^ {0,3}(`+|~+)[ \t]*$/.exec(line);
  const run = match?.[1];
  return run !== undefined && run[0] === fence.char && run.length >= fence.length;
}

/** YAML (`---`) or TOML (`+++`) front matter opening the text, as remark-frontmatter reads it. */
function frontMatterBlock(
  text: string,
  lines: LineIndex,
): { kind: 'yaml' | 'toml'; closingLine: number } | null {
  const kind = text.startsWith('---') ? 'yaml' : text.startsWith('+++') ? 'toml' : null;
  if (!kind) return null;
  const fence = kind === 'yaml' ? /^---[ \t]*$/ : /^\+\+\+[ \t]*$/;
  // Anything else starting with the fence characters (a thematic break, an unclosed block) is rare.
  if (!fence.test(lines.lineText(1)) || lines.count < 2 || !text.includes('\n')) undecided();
  for (let n = 2; n <= lines.count; n++) {
    if (fence.test(lines.lineText(n))) return { kind, closingLine: n };
  }
  return undecided();
}

/** The code spans of one line, as [start, end) offsets; undecided unless every run pairs up. */
function codeSpans(
  text: string,
  start: number,
  end: number,
  heading: boolean,
): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let i = text.indexOf('`', start);
  let runs = 0;
  while (i !== -1 && i < end) {
    const length = runLength(text, i, end);
    if (++runs > MAX_RUNS_PER_LINE) undecided();
    // An escaped backtick changes which runs pair; remark decides that.
    if (text[i - 1] === '\\') undecided();
    let j = text.indexOf('`', i + length);
    let closed = -1;
    while (j !== -1 && j < end) {
      const candidate = runLength(text, j, end);
      if (++runs > MAX_RUNS_PER_LINE) undecided();
      if (candidate === length) {
        closed = j;
        break;
      }
      j = text.indexOf('`', j + candidate);
    }
    if (closed === -1) {
      // An unpaired run may pair with one on another line of the same paragraph; in a heading
      // it is literal text, and the next run may open a span.
      if (!heading) undecided();
      i = text.indexOf('`', i + length);
      continue;
    }
    spans.push([i, closed + length]);
    i = text.indexOf('`', closed + length);
  }
  return spans;
}

function runLength(text: string, at: number, end: number): number {
  let j = at;
  while (j < end && text[j] === '`') j++;
  return j - at;
}

const inside = (ranges: Array<[number, number]>, offset: number): boolean =>
  ranges.some(([from, to]) => offset >= from && offset < to);

/**
 * The destinations of the simple inline links on a line (`[text](dest)`, all on the line).
 * Any other use of `](` (titles, spaces, nesting, a text that starts on another line) is undecided.
 */
function linkDestinations(
  text: string,
  start: number,
  end: number,
  code: Array<[number, number]>,
): Array<[number, number]> {
  const destinations: Array<[number, number]> = [];
  let at = text.indexOf('](', start);
  while (at !== -1 && at < end) {
    if (!inside(code, at)) {
      if (destinations.length >= MAX_RUNS_PER_LINE) undecided();
      const dest = SIMPLE_DESTINATION.exec(text.slice(at + 2, end));
      if (!dest) undecided();
      const open = text.lastIndexOf('[', at);
      const label = text.slice(open + 1, at);
      if (
        open < start ||
        /[[\]`\\]/.test(label) ||
        label.startsWith('^') ||
        text[open - 1] === '\\' ||
        text[open - 1] === ']'
      ) {
        undecided();
      }
      destinations.push([at + 2, at + 2 + dest[0].length - 1]);
    }
    at = text.indexOf('](', at + 2);
  }
  return destinations;
}

/** The tags on one line of prose (a paragraph, heading or list item line). */
function collectLineTags(
  text: string,
  span: LineSpan,
  heading: boolean,
  lines: LineIndex,
  into: TagOccurrence[],
): void {
  const { start, end } = span;
  const line = text.slice(start, end);
  const code = line.includes('`') ? codeSpans(text, start, end, heading) : [];
  if (code.length === 0) {
    if (UNDECIDED_INLINE.test(line)) undecided();
  } else {
    let outside = '';
    let from = start;
    for (const [a, b] of code) {
      outside += `${text.slice(from, a)} `;
      from = b;
    }
    outside += text.slice(from, end);
    if (UNDECIDED_INLINE.test(outside)) undecided();
  }
  if (!line.includes('#')) return;
  const links = line.includes('](') ? linkDestinations(text, start, end, code) : [];
  for (const match of line.matchAll(TAG_IN_TEXT)) {
    const at = start + (match.index ?? 0);
    const after = at + match[0].length;
    if (inside(code, at) || inside(links, at)) continue;
    // Next to `*`, `_` or `~` the answer depends on whether they form emphasis.
    if (DELIMITER.test(text[at - 1] ?? '') || DELIMITER.test(text[after] ?? '')) undecided();
    if (!isTagBoundary(text, at, after)) continue;
    if (URL_LIKE.test(wordAround(text, at, start, end))) undecided();
    into.push(proseOccurrence(match[0], at, lines));
  }
}

/** The whitespace-delimited word holding `at`, within the line. */
function wordAround(text: string, at: number, start: number, end: number): string {
  let from = at;
  while (from > start && !/\s/.test(text[from - 1] as string)) from--;
  let to = at;
  while (to < end && !/\s/.test(text[to] as string)) to++;
  return text.slice(from, to);
}
