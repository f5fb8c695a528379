/**
 * The `.gitignore` lines for what engine writes at run time under a project root, so that a
 * project keeps a clean `git status` once the daemon has run. Each is added once and never
 * removed or reordered: the user's own lines stay as they are. Pure.
 */
export const GITIGNORE = '.gitignore';

/** Each pattern, with what it ignores (docs/CLI.md, "engine init", lists the same). */
export const GITIGNORE_LINES: readonly string[] = [
  // The daemon's state: lock, event log, pause, no-work record, control socket, agents' `engine` shim.
  'sessions/.engine/',
  // One directory per claim (`<UTC date>_<time>_<NOUN>_<slug>_<rand>/`): state, transcript.
  'sessions/[0-9][0-9][0-9][0-9]_[0-9][0-9]_[0-9][0-9]_*/',
  // A request file's edit lock, beside the file, while it is being written.
  '*.engine-lock',
  // The index's watch probes in a watched root, while the daemon runs: `.engine-sync-<pid>-<n>`
  // (index/index-sync.ts), and not a user's `.engine-sync-notes.md`.
  '.engine-sync-[1-9]*-[1-9]*',
];

const HEADER = '# engine: runtime files (added by engine init)';

/**
 * What to append to a `.gitignore` holding `existing` (null: none yet) so that it has every line
 * of GITIGNORE_LINES; null when it has them all. A line counts as there when a line of the file,
 * trimmed, is the same pattern.
 */
export function gitignoreAddition(
  existing: string | null,
): { text: string; added: string[] } | null {
  const have = new Set((existing ?? '').split(/\r?\n/).map((line) => line.trim()));
  const added = GITIGNORE_LINES.filter((line) => !have.has(line));
  if (added.length === 0) return null;
  const lead = existing === null || existing === '' ? '' : existing.endsWith('\n') ? '\n' : '\n\n';
  const header = have.has(HEADER) ? [] : [HEADER];
  return { text: `${lead}${[...header, ...added].join('\n')}\n`, added };
}
