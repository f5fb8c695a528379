/**
 * Human output that fits a terminal of WIDTH columns: relative times, paths shortened relative to
 * the project root, and text wrapped at spaces (a word longer than a line is cut across lines).
 * Columns are counted as UTF-16 units: paths and tags are mostly ASCII.
 */
import { isAbsolute, relative } from 'node:path';

export const WIDTH = 80;

/** A path longer than this is shown by its end. */
const PATH_COLUMNS = 56;

/** `file` relative to `root` when it is under it, and its last columns when still long. */
export function shortPath(root: string, file: string, columns = PATH_COLUMNS): string {
  const rel = relative(root, file);
  const shown = rel === '' || rel.startsWith('..') || isAbsolute(rel) ? file : rel;
  return shown.length <= columns ? shown : `…${shown.slice(shown.length - columns + 1)}`;
}

/**
 * `text` as lines of at most `width` columns: the first starts with `indent`, the others with
 * `hang`. Wrapped at spaces; a run of spaces between words stays as written.
 */
export function wrap(text: string, indent: string, hang: string, width = WIDTH): string[] {
  // What fits needs no split: most lines of a long status (a tenth of its printing time).
  if (indent.length + text.length <= width) return [(indent + text).trimEnd()];
  const lines: string[] = [];
  let line = indent;
  let fresh = true;
  for (const chunk of text.split(/(?<= )(?=[^ ])/)) {
    const word = chunk.trimEnd();
    if (!fresh && (line + word).length > width) {
      lines.push(line.trimEnd());
      line = hang;
      fresh = true;
    }
    let rest = chunk;
    while (line.length + rest.trimEnd().length > width) {
      const room = Math.max(1, width - line.length);
      lines.push(line + rest.slice(0, room));
      line = hang;
      rest = rest.slice(room);
    }
    line += rest;
    fresh = false;
  }
  lines.push(line.trimEnd());
  return lines;
}

// Relative times are worded in status/ (the board says them too); re-exported for the CLI's views.
export { duration, relativeTime } from '../status/relative-time.js';
