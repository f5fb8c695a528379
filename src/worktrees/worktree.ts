/**
 * A git worktree per item (`--worktree`): each claim's agent works in
 * `<root>/.engine-worktrees/<noun>/<slug>/` on the branch `engine/<noun>/<slug>`, made from the
 * current HEAD at the item's first claim and kept after it: a requeued item's next attempt works
 * (and resumes its conversation) in the same worktree, and a done item's branch and worktree stay
 * for review until `engine worktree prune`. The request file stays in the main tree.
 *
 * git is run with `execFile`, never through a shell; the slug is made of `[a-z0-9-]` only and
 * paths are absolute and given after `--`, so no file name reaches git as an option or a command.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { EngineError, isErrnoException, messageOf } from '../errors.js';
import { gitOk, oneLine, runGit as git } from '../process/run-git.js';
import { fileSlug } from '../files/file-slug.js';
import { pathExists as exists } from '../files/path-exists.js';

/** The directory under the root that holds the worktrees; no walk or watch descends into it. */
export const WORKTREES_DIR = '.engine-worktrees';
const HASH_CHARS = 8;

export interface WorktreePlace {
  branch: string;
  /** The worktree's directory. */
  path: string;
}

/**
 * The item's worktree, the same for every attempt: its slug is the request file's name, bounded
 * and reduced to `[a-z0-9-]`, then a hash of its path under the root, so two requests with one
 * name in two directories never share a worktree. Pure.
 */
export function worktreePlace(root: string, noun: string, requestFile: string): WorktreePlace {
  const name = fileSlug(requestFile);
  const hash = createHash('sha256')
    .update(relative(root, requestFile))
    .digest('hex')
    .slice(0, HASH_CHARS);
  const slug = `${name}-${hash}`;
  return { branch: `engine/${noun}/${slug}`, path: join(root, WORKTREES_DIR, noun, slug) };
}

/**
 * Checks at daemon start that the root is in a git repository with a commit to branch from.
 * Returns the root's path inside the repository (`git rev-parse --show-prefix`).
 */
export async function checkWorktreeRoot(root: string): Promise<string> {
  const inside = await git(root, ['rev-parse', '--show-prefix']);
  if (inside.code !== 0)
    throw new EngineError(
      `${root} is not in a git repository, which worktrees (--worktree) need: ${oneLine(inside.stderr)}`,
    );
  const head = await git(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (head.code !== 0)
    throw new EngineError(
      `the git repository of ${root} has no commit yet, and each worktree (--worktree) branches from HEAD`,
    );
  return inside.stdout.trim();
}

/** What `worktreeFor` gives an agent: its worktree, and the directory it runs in there. */
export interface Worktree extends WorktreePlace {
  /** The root's counterpart in the worktree (the root may be a directory inside the repository). */
  cwd: string;
}

/** The item's record beside its worktree, read by `prune`: `<path>.json`. */
interface WorktreeRecord {
  requestFile: string;
  noun: string;
  branch: string;
}

// One git change of the worktree list at a time: launches run in parallel.
let gitQueue: Promise<unknown> = Promise.resolve();
function serially<T>(work: () => Promise<T>): Promise<T> {
  const next = gitQueue.then(work, work);
  gitQueue = next.catch(() => undefined);
  return next;
}

/** The item's worktree, made from HEAD at its first claim, the existing one after that. */
export function worktreeFor(root: string, noun: string, requestFile: string): Promise<Worktree> {
  return serially(async () => {
    const place = worktreePlace(root, noun, requestFile);
    const prefix = await checkWorktreeRoot(root);
    const container = join(root, WORKTREES_DIR);
    await mkdir(join(container, noun), { recursive: true });
    // The worktrees are not the main tree's files: git status there stays clean.
    await writeFile(join(container, '.gitignore'), '*\n');
    if (await exists(place.path)) {
      const branch = (await gitOk(place.path, ['rev-parse', '--abbrev-ref', 'HEAD'])).trim();
      const top = (await gitOk(place.path, ['rev-parse', '--show-toplevel'])).trim();
      if (branch !== place.branch || top !== (await realpath(place.path)))
        throw new EngineError(
          `${place.path} is not the worktree of ${place.branch} (it is on '${branch}'); move it away`,
        );
    } else {
      // A worktree whose directory was deleted by hand is still registered: forget it first.
      await gitOk(root, ['worktree', 'prune']);
      const known = await git(root, [
        'rev-parse',
        '--verify',
        '--quiet',
        `refs/heads/${place.branch}`,
      ]);
      await gitOk(
        root,
        known.code === 0
          ? ['worktree', 'add', '--', place.path, place.branch]
          : ['worktree', 'add', '-b', place.branch, '--', place.path, 'HEAD'],
      );
    }
    const record: WorktreeRecord = { requestFile, noun, branch: place.branch };
    await writeFile(`${place.path}.json`, `${JSON.stringify(record)}\n`);
    return { ...place, cwd: join(place.path, prefix) };
  });
}

export interface PruneOutcome {
  path: string;
  branch: string;
  removed: boolean;
  /** Why it was kept, or what was removed. */
  reason: string;
}

/**
 * Removes the worktrees (and branches) of finished items whose branches are merged into HEAD.
 * Keeps any with uncommitted changes or untracked files (`git status --porcelain`), and any whose
 * item is not finished: `isFinished` says, from the request file, whether the item is done.
 */
export async function pruneWorktrees(
  root: string,
  isFinished: (requestFile: string, noun: string) => Promise<boolean>,
): Promise<PruneOutcome[]> {
  await checkWorktreeRoot(root);
  const container = join(root, WORKTREES_DIR);
  const outcomes: PruneOutcome[] = [];
  for (const noun of await listDir(container)) {
    for (const entry of await listDir(join(container, noun))) {
      if (!entry.endsWith('.json')) continue;
      const path = join(container, noun, entry.slice(0, -'.json'.length));
      const record = JSON.parse(
        await readFile(join(container, noun, entry), 'utf8'),
      ) as WorktreeRecord;
      outcomes.push(await serially(() => pruneOne(root, path, record, isFinished)));
    }
  }
  return outcomes;
}

async function pruneOne(
  root: string,
  path: string,
  record: WorktreeRecord,
  isFinished: (requestFile: string, noun: string) => Promise<boolean>,
): Promise<PruneOutcome> {
  const { branch } = record;
  const kept = (reason: string): PruneOutcome => ({ path, branch, removed: false, reason });
  if (!(await exists(path))) {
    await rm(`${path}.json`, { force: true });
    return { path, branch, removed: true, reason: 'its directory was already gone' };
  }
  if (!(await isFinished(record.requestFile, record.noun)))
    return kept(`${record.requestFile} is not #done-${record.noun}`);
  const status = await git(path, ['status', '--porcelain']);
  if (status.code !== 0) return kept(`git status failed: ${oneLine(status.stderr)}`);
  if (status.stdout.trim() !== '') return kept('it has uncommitted changes');
  const merged = await git(root, ['merge-base', '--is-ancestor', `refs/heads/${branch}`, 'HEAD']);
  if (merged.code !== 0) return kept(`${branch} is not merged into HEAD`);
  try {
    await gitOk(root, ['worktree', 'remove', '--', path]);
    await gitOk(root, ['branch', '-d', '--', branch]);
  } catch (error) {
    return kept(messageOf(error));
  }
  await rm(`${path}.json`, { force: true });
  return { path, branch, removed: true, reason: 'finished and merged' };
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() || e.name.endsWith('.json'))
      .map((e) => e.name)
      .sort();
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return [];
    throw error;
  }
}
