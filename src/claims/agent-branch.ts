/**
 * The agent's branch of an item (`engine/<noun>/<slug>`), as an earlier run of it left it on the
 * remote: a re-approved item, claimed on any host, continues that branch, so that its push with
 * the done is a fast-forward. Without this, a host that had no local branch made it from the
 * shared branch's tip, the remote refused its push as not a fast-forward, and the item went
 * round (given up, taken over, requeued, claimed again) for good.
 */
import { pathExists } from '../files/path-exists.js';
import { gitOk, oneLine, runGit } from '../process/run-git.js';
import { fetchInto, remoteValue, type ClaimRemote } from './claim-refs.js';

/**
 * Moves this clone's `branch` to the remote's, when the remote has one and the local branch is
 * absent or behind it (an ancestor). A worktree here that has it checked out (the earlier run's,
 * on this host) is fast-forwarded, keeping its uncommitted changes when they do not clash; moving
 * the ref alone would leave its files behind their branch. Says what it left alone; null when it
 * moved it or had nothing to do.
 */
export async function followRemoteBranch(
  where: ClaimRemote,
  branch: string,
): Promise<string | null> {
  const ref = `refs/heads/${branch}`;
  const remote = await remoteValue(where, ref);
  if (remote === null) return null;
  if (remote === undefined) return `the remote's ${branch} could not be read`;
  const seen = `refs/engine/seen/${where.remote}/heads/${branch}`;
  if (!(await fetchInto(where, `+${ref}:${seen}`)))
    return `the remote's ${branch} could not be fetched`;
  const local = await runGit(where.repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  const old = local.code === 0 ? local.stdout.trim() : null;
  if (old === remote) return null;
  if (old !== null) {
    const behind = await runGit(where.repo, ['merge-base', '--is-ancestor', old, remote]);
    if (behind.code !== 0) return `${branch} here has commits the remote's lacks: left as it is`;
    const list = await gitOk(where.repo, ['worktree', 'list', '--porcelain', '-z']);
    const checkedOut = worktreeOf(list, ref);
    // A worktree whose directory was deleted by hand is forgotten, and its branch moved alone.
    if (checkedOut !== null && !(await pathExists(checkedOut)))
      await gitOk(where.repo, ['worktree', 'prune']);
    else if (checkedOut !== null) return fastForward(checkedOut, branch, remote);
  }
  // Compare-and-swap on the local ref too: absent (an empty old value), or still `old`.
  await gitOk(where.repo, [
    'update-ref',
    '-m',
    'engine: the agent branch as the remote has it',
    ref,
    remote,
    old ?? '',
  ]);
  return null;
}

/** The worktree that has `ref` checked out, from `git worktree list --porcelain -z`. */
function worktreeOf(list: string, ref: string): string | null {
  // Fields end in NUL; an empty field ends a worktree's record.
  let path: string | null = null;
  for (const field of list.split('\0')) {
    if (field.startsWith('worktree ')) path = field.slice('worktree '.length);
    else if (field === `branch ${ref}`) return path;
  }
  return null;
}

async function fastForward(path: string, branch: string, remote: string): Promise<string | null> {
  const merged = await runGit(path, ['merge', '--ff-only', '--quiet', remote]);
  if (merged.code === 0) return null;
  return `${branch} is checked out in ${path} and could not be fast-forwarded (${oneLine(merged.stderr)}): left as it is`;
}
