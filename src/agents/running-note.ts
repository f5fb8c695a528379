/**
 * The note that tells an agent which other items run now, on this host and on others (issue 23,
 * "Awareness"), so that it does not edit what another agent is changing. Pure. It names each
 * item's file, noun, host and branch in words: never a tag (`#claimed-…`), so the note reads as
 * no tag wherever it is copied to, and it is capped, saying how many more.
 */

/** An item another agent works on now. */
export interface RunningItem {
  /** Relative to the repository (or the root). */
  file: string;
  noun: string;
  host: string;
  /** The branch it works on, when known (its worktree's); null: not known. */
  branch: string | null;
}

/** How many items a note names at most: enough to steer clear of them, short in a prompt. */
export const RUNNING_NOTE_CAP = 10;

/** The note; null when nothing else runs. Sorted by host, then file, so it reads stably. */
export function runningNote(items: RunningItem[], cap: number = RUNNING_NOTE_CAP): string | null {
  if (items.length === 0) return null;
  const sorted = [...items].sort(
    (a, b) => a.host.localeCompare(b.host) || a.file.localeCompare(b.file),
  );
  const named = sorted.slice(0, cap).map(itemText);
  const more = sorted.length - named.length;
  return (
    `Other items run now (${items.length}); leave their files and branches to their agents: ` +
    named.join('; ') +
    (more > 0 ? `; and ${more} more.` : '.')
  );
}

function itemText({ file, noun, host, branch }: RunningItem): string {
  const on = branch === null ? '' : `, branch ${plain(branch)}`;
  return `${plain(file)} (noun ${plain(noun)}, host ${plain(host)}${on})`;
}

/** Another host's record is read as given: no control character reaches the prompt. */
function plain(text: string): string {
  return text.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, '?');
}
