/**
 * Where a tag begins and ends in source text: shared by the remark locator and the fast path, so
 * both apply the one rule of docs/TAGS.md.
 */
import type { LineIndex } from './line-index.js';
import type { TagOccurrence } from './tag-scan-types.js';
import { HASH_ATTACHED, NAME_CONTINUES } from './tag-name.js';

/** Emphasis and strikethrough delimiters: markup, not text, where they border a text node. */
export const DELIMITER = /[*_~]/;

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

/** The occurrence of a tag found in prose at offset `at`. */
export function proseOccurrence(tag: string, at: number, lines: LineIndex): TagOccurrence {
  return {
    tag,
    start: at,
    end: at + tag.length,
    ...lines.position(at),
    place: 'prose',
    bare: false,
  };
}
