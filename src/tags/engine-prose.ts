/**
 * Text that engine writes into a request file (a Recovery entry's fields, the Worktree line):
 * made so that it never holds a tag, whatever it names. A failure's reason may quote a tag
 * (`without marking #done-fix`), a path or an error message; written as prose, such a tag would
 * be a real one, and a failed item would read as done (docs/TAGS.md, "Tags in engine's own
 * lines"). Pure.
 */

/** Characters that end a line or are not text: a field stays on its one line. */
const NOT_ONE_LINE = /[\s\p{Cc}]+/gu;
/** Punctuation around a word that stays outside its code span, for reading. */
const LEADING = /^[(["']+/;
const TRAILING = /[)\]"',;:.!?]+$/;

/**
 * `value` as inline markdown on one line: every word that holds a `#` or a backtick becomes a
 * code span, where nothing is a tag. The other words hold neither, so they can neither be a tag
 * nor open a code span that would swallow the span of a later word; a word whose span sits
 * inside raw HTML or an autolink is no tag either.
 */
export function proseText(value: string): string {
  return value
    .replace(NOT_ONE_LINE, ' ')
    .trim()
    .split(' ')
    .map((word) => (/[#`]/.test(word) ? quotedWord(word) : word))
    .join(' ');
}

function quotedWord(word: string): string {
  const lead = LEADING.exec(word)?.[0] ?? '';
  const trail = TRAILING.exec(word.slice(lead.length))?.[0] ?? '';
  const core = word.slice(lead.length, word.length - trail.length);
  return `${lead}${codeSpan(core)}${trail}`;
}

/**
 * `value` as one code span: fenced by more backticks than its longest run, padded with a space
 * when it starts or ends with a backtick (CommonMark strips one such space on each side). Line
 * endings and control characters become U+FFFD: a code span stays on its line.
 */
export function codeSpan(value: string): string {
  const text = value.replace(/\p{Cc}/gu, '\uFFFD');
  if (text === '') return '` `';
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}
