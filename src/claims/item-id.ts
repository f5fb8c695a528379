/**
 * An item's id on the shared remote, the same on every host and across a rename of its file:
 * derived from the shared history, from the commit that added the file and the path it was added
 * at (`git log --follow`, so a rename, even with edits, keeps it; a file added again after a
 * delete is another item). A readable slug of that first name, then a hash.
 *
 * `--follow` also follows a copy (git looks for copies harder when it follows), so a request
 * copied as the template of a new one would share its source's id, and never run: ids that
 * several files of one tree share are told apart (resolveItemIds).
 */
import { createHash } from 'node:crypto';
import { basename, extname } from 'node:path';
import { runGit } from '../process/run-git.js';
import { isItemId } from './lease.js';

const HASH_CHARS = 16;
const SLUG_CHARS = 40;

/** The id from the adding commit and the path it added; pure. */
export function itemIdFrom(addedBy: string, addedAs: string): string {
  const slug =
    basename(addedAs, extname(addedAs))
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, SLUG_CHARS)
      .replace(/-+$/, '') || 'request';
  const hash = createHash('sha256').update(`${addedBy}\0${addedAs}`).digest('hex');
  const id = `${slug}-${hash.slice(0, HASH_CHARS)}`;
  if (!isItemId(id)) throw new Error(`made an item id that is not one: ${id}`);
  return id;
}

/**
 * The id of the file at `path` in `commit`'s history; null when the history does not hold the
 * file (or git cannot read it): the caller must not claim what it cannot name.
 */
export async function itemIdOf(repo: string, commit: string, path: string): Promise<string | null> {
  const run = await runGit(repo, [
    'log',
    '--follow',
    '--diff-filter=A',
    '--format=%x00%H',
    '--name-only',
    '-z',
    commit,
    '--',
    path,
  ]);
  if (run.code !== 0) return null;
  // Newest first: the most recent addition is this file's (an older one was deleted since).
  const first = run.stdout.split('\0').filter((part) => part.trim() !== '');
  const [hash, name] = [first[0]?.trim(), first[1]?.trim()];
  if (!hash || !name) return null;
  return itemIdFrom(hash, name);
}

/** A request file of the shared tree, as named so far. */
export interface NamedFile {
  path: string;
  /** The id the file itself carries (written with its claim); it wins. */
  carried: string | null;
  /** From the history (itemIdOf); null when the history does not name it. */
  fromHistory: string | null;
}

/**
 * The id of each file of one tree. A history id several files share stays with the file a
 * claim already names by that id at its path (`claimedAt`: id → the claim's file), or else goes
 * to none of them: each is named by its path too, so a copy is never taken for its source.
 */
export function resolveItemIds(
  files: NamedFile[],
  claimedAt: ReadonlyMap<string, string>,
): Map<string, string> {
  const ids = new Map<string, string>();
  const sharing = new Map<string, NamedFile[]>();
  for (const file of files) {
    if (file.carried !== null && isItemId(file.carried)) ids.set(file.path, file.carried);
    else if (file.fromHistory !== null) {
      sharing.set(file.fromHistory, [...(sharing.get(file.fromHistory) ?? []), file]);
    }
  }
  const carried = new Set(ids.values());
  for (const [id, named] of sharing) {
    const only = named.length === 1 && !carried.has(id);
    for (const file of named) {
      const keeps = only || claimedAt.get(id) === file.path;
      ids.set(file.path, keeps ? id : qualified(id, file.path));
    }
  }
  return ids;
}

function qualified(id: string, path: string): string {
  const hash = createHash('sha256').update(`${id}\0${path}`).digest('hex');
  return itemIdFrom(hash, basename(path));
}
