/**
 * The claim refs on the shared remote, through git itself: a ref update on a git server is an
 * atomic compare-and-swap (receive-pack checks each ref's old value under the ref's lock), so a
 * push with `--force-with-lease=<ref>:<expected>` is the one write of a claim, and a rejected
 * push means another host moved the ref first. Never a forced push without an expected value.
 *
 * The human's clone is used only as an object store: fetches write engine's own namespace
 * (`refs/engine/seen/`, with an empty refmap so the remote-tracking refs stay where the human
 * left them), pushes go to the remote's URL (so no remote-tracking ref moves) and carry no tags
 * or submodules, and one fetch runs at a time per clone.
 */
import { gitOk, networkOptions, oneLine, runGit, serialized } from '../process/run-git.js';
import { claimRefOf, decodeLease, encodeLease, isItemId, type LeaseRecord } from './lease.js';

/** Where the claims live: a local clone (`repo`) and the name of its shared remote. */
export interface ClaimRemote {
  repo: string;
  remote: string;
  /** How long one fetch, push or ls-remote may take (default NETWORK_DEADLINE_MS). */
  deadlineMs?: number;
}

/** The options of a git run that talks to the remote: a deadline, no credential prompt. */
function network(where: ClaimRemote) {
  return networkOptions(where.deadlineMs);
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

export function checkRemote(remote: string): void {
  // A remote is named, never a URL or an option: it is passed to git as an argument.
  if (!REMOTE_NAME.test(remote))
    throw new RangeError(`not a remote name: ${JSON.stringify(remote)}`);
}

/** The URL pushes go to; null when the remote has none. */
export async function pushUrl(where: ClaimRemote): Promise<string | null> {
  checkRemote(where.remote);
  const run = await runGit(where.repo, ['remote', 'get-url', '--push', where.remote]);
  return run.code === 0 ? run.stdout.trim() : null;
}

/** Push options every engine push carries: no tags, no submodules, no hooks. */
export const PUSH_FLAGS = [
  '--porcelain',
  '--no-verify',
  '--no-follow-tags',
  '--no-recurse-submodules',
];

/**
 * A fetch into engine's own refs only; false when the remote could not be reached. `prune`: a
 * destination ref whose source is gone on the remote goes too.
 */
export async function fetchInto(
  where: ClaimRemote,
  refspec: string,
  prune = false,
): Promise<boolean> {
  checkRemote(where.remote);
  const run = await serialized(where.repo, () =>
    runGit(
      where.repo,
      [
        'fetch',
        '--quiet',
        ...(prune ? ['--prune'] : []),
        '--no-tags',
        '--no-write-fetch-head',
        '--no-recurse-submodules',
        '--refmap=',
        where.remote,
        refspec,
      ],
      network(where),
    ),
  );
  return run.code === 0;
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

export const ENGINE_IDENTITY = {
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
  const outcome = await swapRef(where, claimRefOf(item), expected, commit);
  if (outcome.kind === 'done' && commit === null && expected !== null)
    await dropSeen(where, item, expected);
  return outcome;
}

/**
 * - `gone`: another deleted the ref before this delete (a release, a prune): nothing done.
 * - the others as SwapOutcome's; `lost`: the ref moved (a renewal, a takeover).
 */
export type DeleteOutcome = SwapOutcome | { kind: 'gone' };

/**
 * Deletes `item`'s claim ref from `expected`; a lost race is read again, since a ref that moved
 * and a ref that went mean different things to a person.
 */
export async function deleteClaimRef(
  where: ClaimRemote,
  item: string,
  expected: string,
): Promise<DeleteOutcome> {
  const outcome = await swapClaimRef(where, item, expected, null);
  if (outcome.kind !== 'lost' || (await remoteValue(where, claimRefOf(item))) !== null)
    return outcome;
  await dropSeen(where, item, expected);
  return { kind: 'gone' };
}

/** The claim is gone: so is this clone's copy of it, unless a fetch moved that since. */
async function dropSeen(where: ClaimRemote, item: string, expected: string): Promise<void> {
  await runGit(where.repo, ['update-ref', '-d', `${seenClaims(where)}/${item}`, expected]);
}

/**
 * Moves `ref` on the remote from `expected` (null: the ref must not exist) to `commit` (null:
 * delete it), or learns that it could not.
 */
export async function swapRef(
  where: ClaimRemote,
  ref: string,
  expected: string | null,
  commit: string | null,
): Promise<SwapOutcome> {
  const url = await pushUrl(where);
  if (url === null) return { kind: 'refused', message: `no remote ${where.remote}` };
  const run = await runGit(
    where.repo,
    [
      'push',
      ...PUSH_FLAGS,
      `--force-with-lease=${ref}:${expected ?? ''}`,
      url,
      `${commit ?? ''}:${ref}`,
    ],
    network(where),
  );
  const line = run.stdout.split('\n').find((l) => l.split('\t')[1]?.endsWith(`:${ref}`));
  if (line === undefined) {
    return { kind: 'unreachable', message: oneLine(run.stderr) || `git push exited ${run.code}` };
  }
  // "=": git found the ref already at the new value and skipped the lease's check.
  if (line.startsWith('=')) return expected === commit ? { kind: 'done' } : { kind: 'lost' };
  if (!line.startsWith('!')) {
    return run.code === 0
      ? { kind: 'done' }
      : { kind: 'unreachable', message: oneLine(run.stderr) };
  }
  // "[rejected] (stale info)" and "[remote rejected]" (whose "failed to update ref" is both a
  // race lost to a concurrent push and a full disk) are told apart by the ref's value now.
  const now = await remoteValue(where, ref);
  if (now === undefined) return { kind: 'unreachable', message: oneLine(run.stderr) };
  // A delete refused because another deleted the ref first did not land: that race is lost.
  if (now === commit) return commit === null ? { kind: 'lost' } : { kind: 'done' };
  if (now !== expected) return { kind: 'lost' };
  const reason = line.split('\t').at(-1) ?? line;
  // The remote could not lock or write the ref (a concurrent push holds its lock, a full disk):
  // tried again later, as a remote out of reach is, never a refusal for good.
  if (COULD_NOT_WRITE.test(reason)) return { kind: 'unreachable', message: reason };
  return { kind: 'refused', message: reason };
}

/** A remote's answer for a ref it could not lock or write, as opposed to one it refused. */
const COULD_NOT_WRITE =
  /\((failed to update ref|failed to lock|cannot lock ref|atomic transaction failed)\)/;

/** The ref's commit on the remote (null: it does not exist); undefined when unreachable. */
export async function remoteValue(
  where: ClaimRemote,
  ref: string,
): Promise<string | null | undefined> {
  const read = await readRemoteRef(where, ref);
  return 'value' in read ? read.value : undefined;
}

/** The ref's commit on the remote (null: it does not exist), or git's message. */
export async function readRemoteRef(
  where: ClaimRemote,
  ref: string,
): Promise<{ value: string | null } | { error: string }> {
  const run = await runGit(
    where.repo,
    ['ls-remote', '--exit-code', where.remote, ref],
    network(where),
  );
  if (run.code === 2) return { value: null };
  if (run.code !== 0) return { error: oneLine(run.stderr) || `git ls-remote exited ${run.code}` };
  return { value: run.stdout.split('\t')[0]?.trim() || null };
}

/** One claim as last fetched: its ref's commit and the record in it (null: not readable). */
export interface SeenClaim {
  item: string;
  commit: string;
  record: LeaseRecord | null;
}

function seenClaims(where: ClaimRemote): string {
  return `refs/engine/seen/${where.remote}/claims`;
}

/**
 * Fetches every claim ref of the remote into this clone (`refs/engine/seen/<remote>/`, pruned)
 * and reads them. Null when the remote could not be reached: the caller must not take "no
 * claims" from a failed fetch.
 */
export async function fetchClaims(where: ClaimRemote): Promise<SeenClaim[] | null> {
  const seen = seenClaims(where);
  // --prune is per refspec: the seen refs of claims deleted on the remote go too.
  if (!(await fetchInto(where, `+refs/engine/claims/*:${seen}/*`, true))) return null;
  return lastFetchedClaims(where);
}

/** The claims as the last fetch left them in this clone, read without the network. */
export function lastFetchedClaims(where: ClaimRemote): Promise<SeenClaim[]> {
  return readSeen(where.repo, `${seenClaims(where)}/`);
}

/** One claim, fetched again; null when unreachable, `absent` when the ref is gone. */
export async function fetchClaim(
  where: ClaimRemote,
  item: string,
): Promise<SeenClaim | 'absent' | null> {
  const value = await remoteValue(where, claimRefOf(item));
  if (value === undefined) return null;
  if (value === null) return 'absent';
  const seen = `${seenClaims(where)}/${item}`;
  if (!(await fetchInto(where, `+${claimRefOf(item)}:${seen}`))) return null;
  const [claim] = await readSeen(where.repo, seen);
  return claim ?? 'absent';
}

async function readSeen(repo: string, pattern: string): Promise<SeenClaim[]> {
  const prefix = pattern.endsWith('/') ? pattern : pattern.slice(0, pattern.lastIndexOf('/') + 1);
  const out = await gitOk(repo, [
    'for-each-ref',
    '--format=%(refname)%00%(objectname)%00%(contents)%00',
    pattern,
  ]);
  const claims: SeenClaim[] = [];
  for (const entry of out.split('\0\n')) {
    const [name, commit, message] = entry.split('\0');
    if (!name || !commit || message === undefined) continue;
    const item = name.slice(prefix.length);
    const record = decodeLease(message);
    // A stray ref (a name no item has, or another item's record) is nobody's claim: unreadable.
    const own = isItemId(item) && record?.item === item;
    claims.push({ item, commit, record: own ? record : null });
  }
  return claims;
}
