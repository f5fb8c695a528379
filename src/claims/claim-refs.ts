/**
 * The claim refs on the shared remote, through git itself: a ref update on a git server is an
 * atomic compare-and-swap (receive-pack checks each ref's old value under the ref's lock), so a
 * push with `--force-with-lease=<ref>:<expected>` is the one write of a claim, and a rejected
 * push means another host moved the ref first. Never a forced push without an expected value.
 */
import { runGit, gitOk, oneLine } from '../process/run-git.js';
import { claimRefOf, decodeLease, encodeLease, type LeaseRecord } from './lease.js';

/** Where the claims live: a local clone (`repo`) and the name of its shared remote. */
export interface ClaimRemote {
  repo: string;
  remote: string;
}

/**
 * - `done`: the ref now holds the new value.
 * - `lost`: the ref held another value than expected (another host wrote first).
 * - `refused`: the server refused the ref for another reason (a hook, a permission).
 * - `unreachable`: git could not talk to the remote.
 */
export type SwapOutcome =
  { kind: 'done' } | { kind: 'lost' } | { kind: 'refused' | 'unreachable'; message: string };

const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function checkRemote(remote: string): void {
  // A remote is named, never a URL or an option: it is passed to git as an argument.
  if (!REMOTE_NAME.test(remote))
    throw new RangeError(`not a remote name: ${JSON.stringify(remote)}`);
}

const emptyTrees = new Map<string, Promise<string>>();

/** The empty tree's id in this repository (it differs between SHA-1 and SHA-256 ones). */
function emptyTree(repo: string): Promise<string> {
  let tree = emptyTrees.get(repo);
  if (!tree) {
    tree = gitOk(repo, ['mktree'], { input: '' }).then((out) => out.trim());
    emptyTrees.set(repo, tree);
  }
  return tree;
}

const ENGINE_IDENTITY = {
  GIT_AUTHOR_NAME: 'engine',
  GIT_AUTHOR_EMAIL: 'engine@localhost',
  GIT_COMMITTER_NAME: 'engine',
  GIT_COMMITTER_EMAIL: 'engine@localhost',
};

/** A commit (empty tree) whose message is the record; its parent is the claim's last commit. */
export async function leaseCommit(
  repo: string,
  record: LeaseRecord,
  parent: string | null,
): Promise<string> {
  const tree = await emptyTree(repo);
  const args = ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-F', '-'];
  const out = await gitOk(repo, args, { env: ENGINE_IDENTITY, input: encodeLease(record) });
  return out.trim();
}

/**
 * Moves `item`'s claim ref on the remote from `expected` (null: the ref must not exist) to
 * `commit` (null: delete it), or learns that it could not.
 */
export async function swapClaimRef(
  where: ClaimRemote,
  item: string,
  expected: string | null,
  commit: string | null,
): Promise<SwapOutcome> {
  checkRemote(where.remote);
  const ref = claimRefOf(item);
  const run = await runGit(where.repo, [
    'push',
    '--porcelain',
    '--no-verify',
    `--force-with-lease=${ref}:${expected ?? ''}`,
    where.remote,
    `${commit ?? ''}:${ref}`,
  ]);
  const line = run.stdout.split('\n').find((l) => l.includes(`:${ref}\t`) || l.endsWith(`:${ref}`));
  if (line === undefined) {
    return { kind: 'unreachable', message: oneLine(run.stderr) || `git push exited ${run.code}` };
  }
  if (!line.startsWith('!')) return run.code === 0 ? { kind: 'done' } : unclear(run.stderr);
  // "[rejected] (stale info)": the ref was not at the expected value.
  if (/\[rejected\]/.test(line)) return { kind: 'lost' };
  // A "[remote rejected]" names the server's reason only loosely ("failed to update ref" is
  // both a race lost to a concurrent push and a full disk): the ref's value now tells which.
  const now = await remoteValue(where, ref);
  if (now === undefined) return unclear(run.stderr);
  if (now !== expected) return { kind: 'lost' };
  return { kind: 'refused', message: line.split('\t').at(-1) ?? line };
}

/** The ref's commit on the remote (null: it does not exist); undefined when unreachable. */
async function remoteValue(where: ClaimRemote, ref: string): Promise<string | null | undefined> {
  const run = await runGit(where.repo, ['ls-remote', '--exit-code', where.remote, ref]);
  if (run.code === 2) return null;
  if (run.code !== 0) return undefined;
  return run.stdout.split('\t')[0]?.trim() || null;
}

function unclear(stderr: string): SwapOutcome {
  return { kind: 'unreachable', message: oneLine(stderr) };
}

/** One claim as last fetched: its ref's commit and the record in it (null: not engine's). */
export interface SeenClaim {
  item: string;
  commit: string;
  record: LeaseRecord | null;
}

/**
 * Fetches every claim ref of the remote into this clone (`refs/engine/seen/<remote>/`, pruned)
 * and reads them. Null when the remote could not be reached: the caller must not take "no
 * claims" from a failed fetch.
 */
export async function fetchClaims(where: ClaimRemote): Promise<SeenClaim[] | null> {
  checkRemote(where.remote);
  const seen = `refs/engine/seen/${where.remote}/claims`;
  const fetch = await runGit(where.repo, [
    'fetch',
    '--quiet',
    '--no-tags',
    '--prune',
    '--no-write-fetch-head',
    where.remote,
    `+refs/engine/claims/*:${seen}/*`,
  ]);
  if (fetch.code !== 0) return null;
  const out = await gitOk(where.repo, [
    'for-each-ref',
    '--format=%(refname)%00%(objectname)%00%(contents)%00',
    `${seen}/`,
  ]);
  const claims: SeenClaim[] = [];
  for (const entry of out.split('\0\n')) {
    const [name, commit, message] = entry.split('\0');
    if (!name || !commit || message === undefined) continue;
    claims.push({ item: name.slice(seen.length + 1), commit, record: decodeLease(message) });
  }
  return claims;
}
