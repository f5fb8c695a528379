/**
 * Pure tag edits: string in, string out. Each edit locates tags with `scanTags`, the same
 * locator `find` uses, and splices only the bytes of the tag it changes (plus one separating
 * space when a tag is removed), so line endings, BOM handling and every other byte stay put.
 */
import { scanTags, type TagOccurrence, type TagScan } from './scan-tags.js';
import { lifecycleOf } from './tag-name.js';

/** The tag(s) a compare-and-swap or an inline removal expected were not there. */
export class TagMissingError extends Error {
  constructor(
    readonly tags: string[],
    readonly line: number | undefined,
    /** A swap's precondition, as opposed to an inline removal's. */
    readonly isSwap: boolean,
  ) {
    super(
      `None of ${tags.join(',')} found${line === undefined ? ' on the Tags line' : ` at line ${line}`}`,
    );
    this.name = 'TagMissingError';
  }
}

/** A line number outside the file. */
export class LineOutOfRangeError extends Error {
  constructor(
    readonly line: number,
    readonly lineCount: number,
  ) {
    super(`line ${line} is out of range (the file has ${lineCount} lines)`);
    this.name = 'LineOutOfRangeError';
  }
}

/**
 * An edit that would change more than the requested tags: removing a line can let the indented
 * lines below it join a list item, turning code into prose and its text into real tags. Every
 * edit checks its result, and refuses rather than change the meaning of other lines.
 */
export class EditChangesMeaningError extends Error {
  constructor(readonly line: number) {
    super(`the edit at line ${line} would change which other text is a tag`);
    this.name = 'EditChangesMeaningError';
  }
}

/**
 * An edit that would leave one noun with two lifecycle states on the Tags line and in front
 * matter (`#done-fix #delegated-fix`): one noun has one state (docs/TAGS.md). Refused, nothing
 * written. `states`: the noun's states before the edit; `result`: after it; `wanted`: the tag the
 * edit writes (null: a claim, refused for any noun of the file with two states).
 */
export class TwoStatesError extends Error {
  constructor(
    readonly states: string[],
    readonly result: string[],
    readonly wanted: string | null,
  ) {
    super(`${result.join(' ')} would be two lifecycle states of one noun`);
    this.name = 'TwoStatesError';
  }
}

interface Splice {
  start: number;
  end: number;
  insert: string;
}

/** Tags that carry an item's state: the Tags line and front matter `tags:`. */
export function carrierTags(scan: TagScan): TagOccurrence[] {
  return scan.occurrences.filter((o) => o.place !== 'prose');
}

export function lineEnding(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** Appends `tag` to the Tags line, creating the line if needed; returns null when already there. */
export function addTag(text: string, tag: string): string | null {
  const scan = scanTags(text);
  if (carrierTags(scan).some((o) => o.tag === tag)) return null;
  const noun = lifecycleOf(tag)?.noun;
  const states = noun === undefined ? [] : statesOf(carrierTags(scan), noun);
  if (states.length > 0) throw new TwoStatesError(states, [...states, tag], tag);
  if (scan.tagsLine) {
    const { start, end } = scan.tagsLine;
    const content = text.slice(start, end);
    const at = start + content.trimEnd().length;
    const added = applySplices(text, [{ start: at, end: at, insert: ` ${tag}` }]);
    return checked(added, withTag(tagKeys(scan.occurrences), 'tags-line', tag), scan.tagsLine.line);
  }
  const inserted = insertTagsLine(text, scan, `**Tags**: ${tag}`);
  return checked(inserted, withTag(tagKeys(scan.occurrences), 'tags-line', tag), 1);
}

/**
 * Removes `tag` from the Tags line and front matter (a missing tag is a no-op: null), or with
 * `line`, every real occurrence on that line (missing: TagMissingError).
 */
export function removeTag(text: string, tag: string, line?: number): string | null {
  const scan = scanTags(text);
  const targets = selectTargets(scan, [tag], line);
  if (targets.length === 0) {
    if (line !== undefined) throw new TagMissingError([tag], line, false);
    return null;
  }
  const expected = tagKeys(scan.occurrences.filter((o) => !targets.includes(o)));
  return firstChecked(
    (keepLines) =>
      applySplices(
        text,
        targets.map((o) => removal(text, o, keepLines)),
      ),
    expected,
    (targets[0] as TagOccurrence).line,
  );
}

/**
 * Compare-and-swap: the first present old tag becomes `next`; other present old tags are
 * removed, and `next` is never written twice (when it is already there, as an old tag or not,
 * that copy is kept and every other present old tag is removed). Throws TagMissingError when
 * no old tag is present.
 */
export function swapTags(text: string, olds: string[], next: string, line?: number): string {
  const scan = scanTags(text);
  const targets = selectTargets(scan, olds, line);
  if (targets.length === 0) throw new TagMissingError(olds, line, true);
  const pool =
    line === undefined ? carrierTags(scan) : scan.occurrences.filter((o) => o.line === line);
  const kept = pool.find((o) => o.tag === next);
  const replaced = kept === undefined ? targets[0] : undefined;
  const after = scan.occurrences
    .filter((o) => o === kept || o === replaced || !targets.includes(o))
    .map((o) => (o === replaced ? { ...o, tag: next } : o));
  if (targets.some((o) => o.place !== 'prose')) oneStateEach(scan, after, [...olds, next], next);
  const expected = tagKeys(after);
  return firstChecked(
    (keepLines) =>
      applySplices(
        text,
        targets
          .filter((o) => o !== kept)
          .map((o) => (o === replaced ? replacement(o, next) : removal(text, o, keepLines))),
      ),
    expected,
    (targets[0] as TagOccurrence).line,
  );
}

/** The lifecycle tags of `noun` among `occurrences`, each once, in the order written. */
function statesOf(occurrences: Array<Pick<TagOccurrence, 'tag'>>, noun: string): string[] {
  return [...new Set(occurrences.map((o) => o.tag))].filter(
    (tag) => lifecycleOf(tag)?.noun === noun,
  );
}

/**
 * Refuses a swap on the carrier that leaves a noun it touches (of `tags`) with two states there;
 * one that leaves a single state (`#done-fix,#delegated-fix` to `#needs-fix`) mends such a file.
 */
function oneStateEach(
  scan: TagScan,
  after: Array<Pick<TagOccurrence, 'tag' | 'place'>>,
  tags: string[],
  wanted: string,
): void {
  const carrierAfter = after.filter((o) => o.place !== 'prose');
  for (const noun of new Set(tags.map((tag) => lifecycleOf(tag)?.noun))) {
    if (noun === undefined) continue;
    const result = statesOf(carrierAfter, noun);
    if (result.length > 1)
      throw new TwoStatesError(statesOf(carrierTags(scan), noun), result, wanted);
  }
}

/** A tag and where it counts: what an edit's result is compared by. */
function tagKeys(occurrences: Array<Pick<TagOccurrence, 'tag' | 'place'>>): string[] {
  return occurrences.map((o) => `${o.place} ${o.tag}`).sort();
}

function withTag(keys: string[], place: TagOccurrence['place'], tag: string): string[] {
  return [...keys, `${place} ${tag}`].sort();
}

/**
 * The postcondition of every edit: the real tags of the result are exactly the intended ones.
 * `line` names where the edit was, for the refusal.
 */
export function checked(result: string, expected: string[], line: number): string {
  const actual = tagKeys(scanTags(result).occurrences);
  if (actual.length !== expected.length || actual.some((key, i) => key !== expected[i])) {
    throw new EditChangesMeaningError(line);
  }
  return result;
}

/** Removals that take a tag's line along, and if that changes other tags, keep the line. */
function firstChecked(
  edit: (keepLines: boolean) => string,
  expected: string[],
  line: number,
): string {
  try {
    return checked(edit(false), expected, line);
  } catch (error) {
    if (!(error instanceof EditChangesMeaningError)) throw error;
    return checked(edit(true), expected, line);
  }
}

function selectTargets(scan: TagScan, tags: string[], line: number | undefined): TagOccurrence[] {
  if (line !== undefined) {
    if (!Number.isInteger(line) || line < 1 || line > scan.lines.count) {
      throw new LineOutOfRangeError(line, scan.lines.count);
    }
    return scan.occurrences.filter((o) => o.line === line && tags.includes(o.tag));
  }
  return carrierTags(scan).filter((o) => tags.includes(o.tag));
}

function replacement(o: TagOccurrence, tag: string): Splice {
  return { start: o.start, end: o.end, insert: o.bare ? tag.slice(1) : tag };
}

/**
 * The bytes to delete for one occurrence: the tag and one separator, or a whole line (a prose
 * line only without `keepLine`: its removal can change the meaning of the lines below).
 */
function removal(text: string, o: TagOccurrence, keepLine: boolean): Splice {
  if (o.place === 'front-matter') return frontMatterRemoval(text, o);
  return proseRemoval(text, o, keepLine);
}

/**
 * The tag and one separator. A tag that is all of an emphasis or strikethrough takes its
 * delimiters along (`~~#a~~` left as `~~~~` would open a code fence that swallows the rest of
 * the file), and a tag alone on its line takes the line along (a blank line would end the
 * paragraph and could turn the indented lines below it into a code block).
 */
function proseRemoval(text: string, o: TagOccurrence, keepLine: boolean): Splice {
  let start = o.start;
  let end = o.end;
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const run = /[*_~]+$/.exec(text.slice(lineStart, start))?.[0];
  if (run && text.startsWith([...run].reverse().join(''), end)) {
    start -= run.length;
    end += run.length;
  }
  const newline = text.indexOf('\n', end);
  const contentEnd = newline === -1 ? text.length : newline - (text[newline - 1] === '\r' ? 1 : 0);
  const blank = /^[ \t]*$/;
  const alone = blank.test(text.slice(lineStart, start)) && blank.test(text.slice(end, contentEnd));
  if (alone && keepLine) return { start, end, insert: '' };
  if (alone) {
    if (newline !== -1) return { start: lineStart, end: newline + 1, insert: '' };
    if (lineStart === 0) return { start: 0, end: text.length, insert: '' };
    const previousEnd = lineStart - (text[lineStart - 2] === '\r' ? 2 : 1);
    return { start: previousEnd, end: text.length, insert: '' };
  }
  return { ...withOneSpace(text, start, end), insert: '' };
}

function withOneSpace(text: string, start: number, end: number): { start: number; end: number } {
  if (text[start - 1] === ' ' || text[start - 1] === '\t') return { start: start - 1, end };
  if (text[end] === ' ' || text[end] === '\t') return { start, end: end + 1 };
  return { start, end };
}

function frontMatterRemoval(text: string, o: TagOccurrence): Splice {
  let start = o.start;
  let end = o.end;
  const quote = text[start - 1];
  if ((quote === '"' || quote === "'") && text[end] === quote) {
    start--;
    end++;
  }
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const newline = text.indexOf('\n', end);
  const lineEnd = newline === -1 ? text.length : newline + 1;
  const before = text.slice(lineStart, start);
  const after = text.slice(end, lineEnd);
  if (/^\s*-\s+$/.test(before) && /^\s*$/.test(after))
    return { start: lineStart, end: lineEnd, insert: '' };
  const leading = /^\s*,\s*/.exec(after);
  if (leading) return { start, end: end + leading[0].length, insert: '' };
  const trailing = /\s*,\s*$/.exec(before);
  if (trailing) return { start: lineStart + trailing.index, end, insert: '' };
  return { ...withOneSpace(text, start, end), insert: '' };
}

function insertTagsLine(text: string, scan: TagScan, lineText: string): string {
  const eol = lineEnding(text);
  let at: number;
  if (scan.h1EndLine !== null) {
    at = scan.lines.endOfLineAt(scan.lines.span(scan.h1EndLine).end + 1);
  } else {
    at = scan.frontMatterEnd ?? 0;
  }
  // At the end of a file without a final newline: start a line, and keep the newline missing.
  if (at > 0 && at === text.length && !text.endsWith('\n')) {
    return applySplices(text, [{ start: at, end: at, insert: `${eol}${lineText}` }]);
  }
  // Text right below would continue the Tags line's paragraph (an indented code block or an
  // HTML block would turn into prose, `---` into a heading underline): keep a blank line between.
  const rest = text.slice(at);
  const needsBlankAfter = rest.length > 0 && !/^[ \t]*\r?\n/.test(rest);
  const insert = `${lineText}${eol}${needsBlankAfter ? eol : ''}`;
  return applySplices(text, [{ start: at, end: at, insert }]);
}

/** Applies non-overlapping splices; overlapping deletions are clipped so none removes a byte twice. */
export function applySplices(text: string, splices: Splice[]): string {
  const sorted = [...splices].sort((a, b) => a.start - b.start);
  let out = '';
  let cursor = 0;
  for (const splice of sorted) {
    const start = Math.max(splice.start, cursor);
    out += text.slice(cursor, start) + splice.insert;
    cursor = Math.max(cursor, splice.end);
  }
  return out + text.slice(cursor);
}
