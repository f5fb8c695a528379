/**
 * The `**Worktree**:` line that names a done item's branch and worktree for review, written by
 * the daemon when it sees `#done-X` (through the one request-file writer): below the Session line
 * (or the Tags line, or the front matter), replacing an earlier Worktree line of the same branch. Pure edit; the line is
 * found by the tag locator, so a Worktree line shown inside code is never read or changed.
 */
import { editFile } from '../files/tag-file.js';
import { readStateRecord } from '../sessions/session-state.js';
import { checked, lineEnding } from '../tags/edit-tags.js';
import { sessionLines } from '../tags/lifecycle-edits.js';
import { codeSpan } from '../tags/engine-prose.js';
import { scanTags } from '../tags/scan-tags.js';
import type { WorktreePlace } from './worktree.js';

const WORKTREE_PREFIX = '**Worktree**: ';

/** The branch part of the line, by which the item's own line is found again. */
function branchPart(branch: string): string {
  return `(branch ${codeSpan(branch)})`;
}

/** Path and branch in code spans, whatever they hold: the line never carries a tag. */
export function worktreeLine(place: WorktreePlace): string {
  return `${WORKTREE_PREFIX}${codeSpan(place.path)} ${branchPart(place.branch)}`;
}

/** The text with the item's Worktree line; null when it is there already. */
export function worktreeLineEdit(text: string, place: WorktreePlace): string | null {
  const scan = scanTags(text);
  const line = worktreeLine(place);
  const expected = scan.occurrences.map((o) => `${o.place} ${o.tag}`).sort();
  let existing: number | null = null;
  for (let n = 1; n <= scan.lines.count; n++) {
    const content = scan.lines.lineText(n);
    // Only this item's own line: another noun's, or a human's, is left as it is.
    if (
      content.startsWith(WORKTREE_PREFIX) &&
      content.includes(branchPart(place.branch)) &&
      scan.isProse(n)
    ) {
      existing = n;
      break;
    }
  }
  let result: string;
  if (existing !== null) {
    const span = scan.lines.span(existing);
    if (text.slice(span.start, span.end) === line) return null;
    result = text.slice(0, span.start) + line + text.slice(span.end);
  } else {
    const below = sessionLines(scan)[0] ?? scan.tagsLine;
    // Without a Session or Tags line (front matter tags only), it goes right below the front
    // matter, as a paragraph of its own: never at the end, which may be inside an open block.
    const at = below ? scan.lines.endOfLineAt(below.end + 1) : (scan.frontMatterEnd ?? text.length);
    const eol = lineEnding(text);
    const needsBreak = at === text.length && text.length > 0 && !text.endsWith('\n');
    const insert = below
      ? `${needsBreak ? eol : ''}${line}${eol}`
      : `${needsBreak ? eol : ''}${line}${eol}${eol}`;
    result = text.slice(0, at) + insert + text.slice(at);
  }
  return checked(result, expected, existing ?? scan.tagsLine?.line ?? 1);
}

/**
 * Names the done session's worktree in its request file, when it had one. Returns the line
 * written, or null when the session had no worktree.
 */
export async function nameWorktree(file: string, sessionDir: string): Promise<string | null> {
  const read = await readStateRecord(sessionDir);
  const place = 'state' in read ? read.state.worktree : null;
  if (!place) return null;
  await editFile(file, (text) => worktreeLineEdit(text, place));
  return worktreeLine(place);
}
