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

/** "3 min ago", "in 12 s", "just now": `at` (an ISO time or ms) seen from `now`. */
export function relativeTime(at: string | number, now: Date): string {
  const ms = (typeof at === 'number' ? at : Date.parse(at)) - now.getTime();
  if (Math.abs(ms) < 1000) return 'just now';
  return ms < 0 ? `${duration(-ms)} ago` : `in ${duration(ms)}`;
}

/** "45 s", "3 min", "5 h", "2 d": the largest whole unit. */
export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}
