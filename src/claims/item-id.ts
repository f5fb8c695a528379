/**
 * An item's id on the shared remote, the same on every host and across a rename of its file:
 * derived from the file's own history only (never from the rest of the tree, which hosts may
 * have fetched at different times): the commit that added the file and the path it was added at
 * (`git log --follow`, so a rename, even with edits, keeps it). A file added again after a delete
 * is another item, and so is a copy: `--follow` follows copies too, but shows them as `C`, where
 * the copy's own item starts. A readable slug of that first name, then a hash.
 */
import { createHash } from 'node:crypto';
import { fileSlug } from '../files/file-slug.js';
import { runGit } from '../process/run-git.js';
import { isItemId } from './lease.js';

const HASH_CHARS = 16;

/** The id from the adding commit and the path it added; pure. */
export function itemIdFrom(addedBy: string, addedAs: string): string {
  const slug = fileSlug(addedAs);
  const hash = createHash('sha256').update(`${addedBy}\0${addedAs}`).digest('hex');
  const id = `${slug}-${hash.slice(0, HASH_CHARS)}`;
  if (!isItemId(id)) throw new Error(`made an item id that is not one: ${id}`);
  return id;
}

/**
 * The id of the file at `path` in `commit`'s history; null when `commit`'s tree holds no regular
 * file there (a directory, a symlink, a submodule, nothing) or git cannot read it: the caller
 * must not claim what it cannot name.
 */
export async function itemIdOf(repo: string, commit: string, path: string): Promise<string | null> {
  // Only a file names an item: `log --follow` of a directory would follow its newest file.
  if (!(await isRegularFile(repo, commit, path))) return null;
  const run = await runGit(repo, [
    '--literal-pathspecs',
    'log',
    '--follow',
    '--diff-filter=AC',
    '--name-status',
    '--format=%x00%H',
    '-z',
    commit,
    '--',
    path,
  ]);
  if (run.code !== 0) return null;
  // Newest first: the most recent addition or copy starts this file's item. Each entry is
  // NUL, hash, newline, then the status and its paths, each ended by NUL (a copy: source, then
  // the copy's path).
  const parts = run.stdout.split('\0');
  const hash = parts[1]?.trim();
  const status = parts[2]?.trim();
  if (!hash || !status) return null;
  const name = status.startsWith('C') ? parts[4] : parts[3];
  return name ? itemIdFrom(hash, name) : null;
}

/** Whether `path` is a regular file (mode 100644 or 100755) in `commit`'s tree. */
async function isRegularFile(repo: string, commit: string, path: string): Promise<boolean> {
  const run = await runGit(repo, ['--literal-pathspecs', 'ls-tree', '-z', commit, '--', path]);
  if (run.code !== 0) return false;
  const entries = run.stdout.split('\0').filter((e) => e !== '');
  const [entry] = entries;
  if (entries.length !== 1 || entry === undefined) return false;
  const tab = entry.indexOf('\t');
  const mode = entry.slice(0, entry.indexOf(' '));
  return entry.slice(tab + 1) === path && (mode === '100644' || mode === '100755');
}
