/**
 * Edits of one request file on the shared branch, made by a daemon of many hosts without a
 * working tree: the file is read from the fetched tip, edited in memory, committed on top of
 * that tip (a private index, never the human's), and pushed as a fast-forward, never forced. A
 * push refused as non-fast-forward (a human or another host pushed first) fetches and applies
 * the edit again to the new text, so no human commit is ever overwritten, and an edit that no
 * longer applies (the human changed the line) is given up, not forced.
 *
 * Fencing: a write that counts is pushed together with its lease's compare-and-swap in one
 * atomic push (`--atomic`): the branch moves only if the lease is still the one this host
 * holds, so a host whose lease moved on cannot write `#done-X` over the new holder's work.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitBytes, gitOk, networkOptions, oneLine, runGit } from '../process/run-git.js';
import { claimRefOf } from './lease.js';
import {
  ENGINE_IDENTITY,
  fetchInto,
  PUSH_FLAGS,
  pushUrl,
  remoteValue,
  type ClaimRemote,
} from './claim-refs.js';

export interface SharedBranch extends ClaimRemote {
  branch: string;
}

/** The lease a fenced write moves along with the branch: from `expected` to `commit`. */
export interface Fence {
  item: string;
  expected: string;
  commit: string;
  /** Refs pushed in the same atomic push, without force (a fast-forward): the agent's branch. */
  also?: ReadonlyArray<{ ref: string; commit: string }>;
}

/**
 * - `pushed`: the branch (and the fence's lease) moved; `commit` is the new tip.
 * - `unchanged`: the edit had nothing to change at the tip.
 * - `gone`: the file is not on the branch any more.
 * - `not-applicable`: the edit refused the file's current text (a human changed the line), or
 *   the file is not one engine edits (a symlink, a submodule, text that is not UTF-8).
 * - `fenced`: the lease is not the one given: this host's write does not count.
 * - `refused`: the server refused the push for another reason (a hook, a protected branch).
 * - `unreachable`: git could not fetch or push, or (`raced`) kept losing the race to other pushes.
 */
export type BranchEditOutcome =
  | { kind: 'pushed'; commit: string }
  | { kind: 'unchanged' | 'gone' | 'not-applicable' | 'fenced' }
  | { kind: 'refused' | 'unreachable'; message: string; raced?: true };

/** An edit of a file's text: the new text, or null when it does not apply to this text. */
export type TextEdit = (text: string) => string | null | Promise<string | null>;

/**
 * The fence of each try, asked for again before each push: a write that keeps losing races
 * to other pushes may take longer than its lease, which its fence's source then renews
 * (git-claim-store.ts); `fenced` when the lease moved on meanwhile.
 */
export type FenceSource = () => Promise<Fence | 'fenced'>;

const BRANCH = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/;
const ATTEMPTS = 8;

export async function editOnSharedBranch(
  where: SharedBranch,
  path: string,
  edit: TextEdit,
  message: string,
  fenceOf?: FenceSource,
): Promise<BranchEditOutcome> {
  if (!BRANCH.test(where.branch)) throw new RangeError(`not a branch name: ${where.branch}`);
  let last = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const tip = await fetchTip(where);
    if (tip === null)
      return { kind: 'unreachable', message: 'the shared branch could not be fetched' };
    const file = await fileAt(where.repo, tip, path);
    if (file === 'gone') return { kind: 'gone' };
    if (file === 'not-text') return { kind: 'not-applicable' };
    const { text, mode } = file;
    const edited = await edit(text);
    if (edited === null) return { kind: 'not-applicable' };
    if (edited === text) return { kind: 'unchanged' };
    const commit = await commitFile(where.repo, tip, { path, mode, text: edited }, message);
    const fence = fenceOf ? await fenceOf() : undefined;
    if (fence === 'fenced') return { kind: 'fenced' };
    const pushed = await pushFenced(where, tip, commit, fence);
    if (pushed.kind !== 'retry') return pushed;
    last = pushed.message;
  }
  return { kind: 'unreachable', message: `lost the race ${ATTEMPTS} times: ${last}`, raced: true };
}

function remoteBranch(where: SharedBranch): string {
  return `refs/engine/seen/${where.remote}/heads/${where.branch}`;
}

/**
 * Fetches the branch's tip into engine's own namespace (the human's refs are left alone); null
 * when the remote could not be reached.
 */
export async function fetchTip(where: SharedBranch): Promise<string | null> {
  const ref = remoteBranch(where);
  if (!(await fetchInto(where, `+refs/heads/${where.branch}:${ref}`))) return null;
  return (await gitOk(where.repo, ['rev-parse', '--verify', `${ref}^{commit}`])).trim();
}

const TEXT_MODES = new Set(['100644', '100755']);

/** `fileAt`'s place for the index of the worktree it is asked in, rather than a commit. */
export const INDEX = Symbol('the index');

/**
 * The file's text and mode at a commit, or in the index of the worktree `repo` (`INDEX`): `gone`
 * when it has none, `not-text` when not ours to edit.
 */
export async function fileAt(
  repo: string,
  commit: string | typeof INDEX,
  path: string,
): Promise<{ text: string; mode: string } | 'gone' | 'not-text'> {
  // Each lists `<mode> blob <id>\t<path>` (ls-tree) or `<mode> <id> <stage>\t<path>` (ls-files);
  // --full-tree: the path is from the top, wherever repo is.
  const entry =
    commit === INDEX
      ? await gitOk(repo, ['--literal-pathspecs', 'ls-files', '--stage', '--', path])
      : await gitOk(repo, ['ls-tree', '--full-tree', commit, '--', path]);
  const fields = entry.split(/\s/);
  const [mode, id] = commit === INDEX ? fields : [fields[0], fields[2]];
  if (!mode || !id) return 'gone';
  if (!TEXT_MODES.has(mode)) return 'not-text';
  const bytes = await gitBytes(repo, ['cat-file', 'blob', id]);
  if (bytes === null) return 'gone';
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), mode };
  } catch {
    return 'not-text';
  }
}

/** A commit on `parent` with the file replaced, built in a private index file. */
async function commitFile(
  repo: string,
  parent: string,
  file: { path: string; mode: string; text: string },
  message: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-index-'));
  try {
    const env = { ...ENGINE_IDENTITY, GIT_INDEX_FILE: join(dir, 'index') };
    const blob = (await gitOk(repo, ['hash-object', '-w', '--stdin'], { input: file.text })).trim();
    await gitOk(repo, ['read-tree', parent], { env });
    const cacheinfo = `${file.mode},${blob},${file.path}`;
    await gitOk(repo, ['update-index', '--cacheinfo', cacheinfo], { env });
    const tree = (await gitOk(repo, ['write-tree'], { env })).trim();
    const args = ['commit-tree', tree, '-p', parent, '-F', '-'];
    return (await gitOk(repo, args, { env, input: `${message}\n` })).trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every ref of an atomic push whose transaction the remote could not commit says this. */
const ATOMIC_FAILED = /\[remote rejected\].*\(atomic transaction failed\)$/;

/** A rejection that a fetch and a second try may mend: the branch moved under this push. */
const STALE = /\[rejected\].*\((stale info|fetch first|non-fast-forward|atomic push failed)\)/;

async function pushFenced(
  where: SharedBranch,
  tip: string,
  commit: string,
  fence: Fence | undefined,
): Promise<BranchEditOutcome | { kind: 'retry'; message: string }> {
  const url = await pushUrl(where);
  if (url === null) return { kind: 'refused', message: `no remote ${where.remote}` };
  const branchRef = `refs/heads/${where.branch}`;
  const args = ['push', ...PUSH_FLAGS, '--atomic', `--force-with-lease=${branchRef}:${tip}`];
  if (fence) args.push(`--force-with-lease=${claimRefOf(fence.item)}:${fence.expected}`);
  args.push(url, `${commit}:${branchRef}`);
  if (fence) args.push(`${fence.commit}:${claimRefOf(fence.item)}`);
  for (const pushed of fence?.also ?? []) args.push(`${pushed.commit}:${pushed.ref}`);
  // A deadline as every other push has: one that never answers held every later branch write.
  const run = await runGit(where.repo, args, networkOptions(where.deadlineMs));
  if (run.code === 0) return { kind: 'pushed', commit };
  const lines = run.stdout.split('\n').filter((l) => l.startsWith('!'));
  if (lines.length === 0) return { kind: 'unreachable', message: oneLine(run.stderr) };
  if (fence) {
    const lease = await remoteValue(where, claimRefOf(fence.item));
    if (lease === undefined) return { kind: 'unreachable', message: oneLine(run.stderr) };
    if (lease !== fence.expected) return { kind: 'fenced' };
    // Every ref "atomic transaction failed" and none named its own reason: the remote could
    // not commit the transaction (a ref's lock held by a concurrent push), not a refusal.
    if (lines.every((l) => ATOMIC_FAILED.test(l)))
      return { kind: 'retry', message: lines.join('; ') };
    // A ref pushed along that is not a fast-forward is not mended by a fetch of the branch.
    const also = lines.find((l) => fence.also?.some((a) => l.includes(`:${a.ref}\t`)));
    if (also !== undefined && !/atomic push failed/.test(also))
      return { kind: 'refused', message: also.split('\t').at(-1) ?? also };
  }
  if (lines.every((l) => STALE.test(l))) return { kind: 'retry', message: lines.join('; ') };
  // A "[remote rejected]" (an atomic transaction failed, a ref's lock taken) is a race lost to a
  // concurrent push when the branch moved meanwhile: decided by the branch's value now.
  const now = await remoteValue(where, branchRef);
  if (now === undefined) return { kind: 'unreachable', message: oneLine(run.stderr) };
  if (now !== tip) return { kind: 'retry', message: lines.join('; ') };
  return { kind: 'refused', message: lines.map((l) => l.split('\t').at(-1)).join('; ') };
}
