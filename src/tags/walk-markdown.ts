/**
 * Lists the markdown files under a path. Skips the directories IGNORE_RULES names (`.git`,
 * `node_modules`, our own lock directories), the one list the watch backends and `await-tag`
 * skip too; follows symlinks to files but never symlinked directories, so loops cannot occur.
 * The async walk is for the daemon, which must keep serving events; the sync listing is for
 * `find`, where a tree of 50,000 files lists several times faster without a promise per entry.
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';

export const MARKDOWN_EXTENSIONS = ['.md', '.markdown'];

export interface IgnoreRules {
  /** Directory names never descended into. */
  directoryNames: readonly string[];
  /** Endings of directory names never descended into. */
  directorySuffixes: readonly string[];
  /** Names of files besides markdown a watch reports (a walk lists markdown only). */
  fileNames?: readonly string[];
}

/** The directories no walk or watch descends into: our lock directories too. */
export const IGNORE_RULES: IgnoreRules = {
  // `.engine-worktrees`: the agents' git worktrees (src/worktrees/), each a copy of the tree.
  directoryNames: ['node_modules', '.git', '.engine-worktrees'],
  directorySuffixes: ['.engine-lock'],
};

export function isIgnoredDirectoryName(name: string, rules: IgnoreRules = IGNORE_RULES): boolean {
  return (
    rules.directoryNames.includes(name) ||
    rules.directorySuffixes.some((suffix) => name.endsWith(suffix))
  );
}

export function isIgnoredDirectory(path: string, rules: IgnoreRules = IGNORE_RULES): boolean {
  return isIgnoredDirectoryName(basename(path), rules);
}

export function isMarkdownPath(path: string): boolean {
  const lower = path.toLowerCase();
  return MARKDOWN_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

export interface WalkProblem {
  path: string;
  reason: string;
}

type EntryKind = 'directory' | 'file' | 'link' | 'other';

function classify(entry: Dirent): EntryKind {
  if (entry.isDirectory()) return isIgnoredDirectoryName(entry.name) ? 'other' : 'directory';
  if (!isMarkdownPath(entry.name)) return 'other';
  if (entry.isFile()) return 'file';
  return entry.isSymbolicLink() ? 'link' : 'other';
}

export interface MarkdownEntry {
  name: string;
  /** `dir` joined with the name. */
  path: string;
  /** A symlink named like a markdown file: a file only if it resolves to one. */
  kind: 'directory' | 'file' | 'link';
}

/** The entries of one listing worth visiting (directories not ignored, markdown files), by name. */
export function* markdownEntries(dir: string, entries: Dirent[]): Generator<MarkdownEntry> {
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // join(dir, name) for a name a listing gives (no separator, never `.` or `..`): the prefix is
  // made once a directory, as a pass over 50,000 files spent about 25 ms in join.
  const prefix = entryPrefix(dir);
  for (const entry of entries) {
    const kind = classify(entry);
    if (kind !== 'other') yield { name: entry.name, path: prefix + entry.name, kind };
  }
}

/**
 * What join(dir, name) puts before `name`: `dir` normalized, ending in a separator; empty when
 * `dir` normalizes to `.`.
 */
export function entryPrefix(dir: string): string {
  return join(dir, 'x').slice(0, -1);
}

function listingProblem(dir: string, error: unknown): WalkProblem | null {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR'
    ? null
    : { path: dir, reason: `cannot list: ${code}` };
}

/** Yields markdown file paths below `dir`, each as `dir` joined with the path below it. */
export async function* walkMarkdownFiles(
  dir: string,
  onProblem: (problem: WalkProblem) => void = () => undefined,
): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const problem = listingProblem(dir, error);
    if (problem) onProblem(problem);
    return;
  }
  for (const { path, kind } of markdownEntries(dir, entries)) {
    if (kind === 'directory') yield* walkMarkdownFiles(path, onProblem);
    else if (kind === 'file') yield path;
    else if (kind === 'link' && (await stat(path).catch(() => null))?.isFile()) yield path;
  }
}

function isFileSync(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export interface Listing {
  directories: string[];
  files: string[];
  /** Symlinks named like markdown files that are not files now (dangling, or to a directory). */
  links: string[];
}

/**
 * One directory of {@link walkMarkdownFiles}, without yielding to the event loop: the
 * subdirectories to visit and the markdown files, each as `dir` joined with its name.
 */
export function listMarkdownDirectorySync(
  dir: string,
  onProblem: (problem: WalkProblem) => void = () => undefined,
): Listing {
  const listing: Listing = { directories: [], files: [], links: [] };
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const problem = listingProblem(dir, error);
    if (problem) onProblem(problem);
    return listing;
  }
  for (const { path, kind } of markdownEntries(dir, entries)) {
    if (kind === 'directory') listing.directories.push(path);
    else if (kind === 'file' || isFileSync(path)) listing.files.push(path);
    else if (kind === 'link') listing.links.push(path);
  }
  return listing;
}
