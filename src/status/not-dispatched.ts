/**
 * Files that look like requests but that the daemon will never dispatch, and why: a pure function
 * of one file's scan (its tags, as the one locator found them) and the work read from them, for
 * `engine status`. Each finding says what to change.
 */
import type { DispatchRoute } from '../dispatch/dispatch-table.js';
import { twoStatesProblem, type FileWork } from '../dispatch/work-items.js';
import { looksLikeTagsLine, type TagOccurrence } from '../tags/scan-tags.js';
import { LIFECYCLE_STATES, lifecycleOf, lifecycleTag } from '../tags/tag-name.js';

/** A file none of whose listed tags is dispatched, and why. */
export interface NotDispatched {
  file: string;
  /** The tags the reason is about, as written. */
  tags: string[];
  reason: string;
  /** The line the reason is about; null: the Tags line and front matter as a whole. */
  line: number | null;
}

/** What one file's findings are read from. */
export interface FileFindings {
  file: string;
  /** The file's text, for the lines prose tags sit on. */
  text: string;
  occurrences: TagOccurrence[];
  work: FileWork;
  /** Its names (hard links); 1 when not known. */
  names: number;
}

export function notDispatchedIn(findings: FileFindings): NotDispatched[] {
  const { file, work } = findings;
  const found: NotDispatched[] = work.twoStates.map((twice) => ({
    file,
    tags: twice.tags,
    reason: twoStatesProblem(twice),
    line: null,
  }));
  if (findings.names > 1 && work.items.length > 0) {
    const tags = work.items.map((item) => lifecycleTag('delegated', item.noun));
    const reason = `it has ${findings.names} names (hard links), and a claim would leave the others to run it again: give it one name`;
    found.push({ file, tags, reason, line: null });
  }
  for (const { noun, route } of work.delegated) {
    if (route?.dispatchable) continue;
    const tag = lifecycleTag('delegated', noun);
    found.push({ file, tags: [tag], reason: noRouteProblem(tag, route), line: null });
  }
  for (const o of findings.occurrences.filter((o) => o.place !== 'prose')) {
    const meant = lookalikeOf(o.tag);
    if (meant === null) continue;
    const reason = `${o.tag} is no lifecycle tag, so nothing is dispatched for it; did you mean ${meant}?`;
    found.push({ file, tags: [o.tag], reason, line: o.line });
  }
  return [...found, ...proseProblems(findings)];
}

/** Why a `#delegated-X` with no dispatchable row waits for ever. */
function noRouteProblem(tag: string, route: DispatchRoute | null): string {
  return route === null
    ? `${tag} has no row in §TAG_DISPATCH (directives/TAGS.md): add one, or use a noun it has`
    : `${tag}'s §TAG_DISPATCH row says Daemon no: ${route.skill} is run by hand, not by the daemon`;
}

/**
 * Lifecycle tags written in prose, where they are no item: a line meant as the Tags line, and a
 * `#delegated-X` in the text (such as an inline item approved with --inline). One finding per line.
 */
function proseProblems({ file, text, occurrences }: FileFindings): NotDispatched[] {
  const lines = text.split(/\r?\n/);
  const byLine = new Map<number, string[]>();
  for (const o of occurrences) {
    if (o.place !== 'prose' || lifecycleOf(o.tag) === null) continue;
    byLine.set(o.line, [...(byLine.get(o.line) ?? []), o.tag]);
  }
  const found: NotDispatched[] = [];
  for (const [line, tags] of byLine) {
    const written = lines[line - 1] ?? '';
    if (looksLikeTagsLine(written)) {
      const reason = written.startsWith('**Tags**:')
        ? `line ${line} is a second Tags line, so its tags are prose: only the first line that starts with **Tags**: is the Tags line`
        : `line ${line} is not the Tags line, so its tags are prose: only a line that starts with **Tags**: is (docs/TAGS.md)`;
      found.push({ file, tags, reason, line });
      continue;
    }
    const delegated = tags.filter((tag) => lifecycleOf(tag)?.state === 'delegated');
    if (delegated.length === 0) continue;
    const reason = `${delegated.join(' ')} at line ${line} is in prose, no item: the daemon dispatches only the Tags line and front matter`;
    found.push({ file, tags: delegated, reason, line });
  }
  return found;
}

/**
 * The lifecycle tag `tag` was probably meant to be (`#delegate-fix`: `#delegated-fix`), or null
 * when it is one, or close to none: its state part within one edit of a state's name (two for
 * the long ones, `delegated` and `claimed`), in any case.
 */
export function lookalikeOf(tag: string): string | null {
  if (lifecycleOf(tag) !== null) return null;
  const match = /^#([A-Za-z]+)-([A-Za-z0-9][A-Za-z0-9-]*)$/.exec(tag);
  if (!match) return null;
  const state = (match[1] as string).toLowerCase();
  const noun = (match[2] as string).toLowerCase();
  let best: { name: string; distance: number } | null = null;
  for (const name of LIFECYCLE_STATES) {
    const distance = editDistance(state, name);
    const allowed = name.length >= 7 ? 2 : 1;
    if (distance <= allowed && (best === null || distance < best.distance))
      best = { name, distance };
  }
  return best === null ? null : lifecycleTag(best.name as (typeof LIFECYCLE_STATES)[number], noun);
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        substitute,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}
