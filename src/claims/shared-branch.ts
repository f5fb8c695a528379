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
import { gitOk, oneLine, runGit } from '../process/run-git.js';
import { claimRefOf } from './lease.js';
import type { ClaimRemote } from './claim-refs.js';

export interface SharedBranch extends ClaimRemote {
  branch: string;
}

/** The lease a fenced write moves along with the branch: from `expected` to `commit`. */
export interface Fence {
  item: string;
  expected: string;
  commit: string;
}

/**
 * - `pushed`: the branch (and the fence's lease) moved; `commit` is the new tip.
 * - `unchanged`: the edit had nothing to change at the tip.
 * - `gone`: the file is not on the branch any more.
 * - `not-applicable`: the edit refused the file's current text (a human changed the line).
 * - `fenced`: the lease is not the one given: this host's write does not count.
 * - `unreachable`: git could not fetch or push (or kept losing the race).
 */
export type BranchEditOutcome =
  | { kind: 'pushed'; commit: string }
  | { kind: 'unchanged' | 'gone' | 'not-applicable' | 'fenced' }
  | { kind: 'unreachable'; message: string };

/** An edit of a file's text: the new text, or null when it does not apply to this text. */
export type TextEdit = (text: string) => string | null;

const BRANCH = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/;
const ATTEMPTS = 8;

export async function editOnSharedBranch(
  where: SharedBranch,
  path: string,
  edit: TextEdit,
  message: string,
  fence?: Fence,
): Promise<BranchEditOutcome> {
  if (!BRANCH.test(where.branch)) throw new RangeError(`not a branch name: ${where.branch}`);
  let last = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const tip = await fetchTip(where);
    if (tip === null)
      return { kind: 'unreachable', message: 'the shared branch could not be fetched' };
    const text = await fileAt(where.repo, tip, path);
    if (text === null) return { kind: 'gone' };
    const edited = edit(text);
    if (edited === null) return { kind: 'not-applicable' };
    if (edited === text) return { kind: 'unchanged' };
    const commit = await commitFile(where.repo, tip, path, edited, message);
    const pushed = await pushFenced(where, tip, commit, fence);
    if (pushed.kind !== 'retry') return pushed;
    last = pushed.message;
  }
  return { kind: 'unreachable', message: `lost the race ${ATTEMPTS} times: ${last}` };
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
  const run = await runGit(where.repo, [
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-write-fetch-head',
    where.remote,
    `+refs/heads/${where.branch}:${ref}`,
  ]);
  if (run.code !== 0) return null;
  return (await gitOk(where.repo, ['rev-parse', '--verify', `${ref}^{commit}`])).trim();
}

/** The file's text at a commit; null when the commit has no such file. */
async function fileAt(repo: string, commit: string, path: string): Promise<string | null> {
  const run = await runGit(repo, ['cat-file', 'blob', `${commit}:${path}`]);
  return run.code === 0 ? run.stdout : null;
}

/** A commit on `parent` with the file replaced, built in a private index file. */
async function commitFile(
  repo: string,
  parent: string,
  path: string,
  text: string,
  message: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-index-'));
  try {
    const env = {
      GIT_INDEX_FILE: join(dir, 'index'),
      GIT_AUTHOR_NAME: 'engine',
      GIT_AUTHOR_EMAIL: 'engine@localhost',
      GIT_COMMITTER_NAME: 'engine',
      GIT_COMMITTER_EMAIL: 'engine@localhost',
    };
    const blob = (await gitOk(repo, ['hash-object', '-w', '--stdin'], { input: text })).trim();
    const mode = (await gitOk(repo, ['ls-tree', parent, '--', path])).split(' ')[0] || '100644';
    await gitOk(repo, ['read-tree', parent], { env });
    await gitOk(repo, ['update-index', '--cacheinfo', `${mode},${blob},${path}`], { env });
    const tree = (await gitOk(repo, ['write-tree'], { env })).trim();
    const args = ['commit-tree', tree, '-p', parent, '-F', '-'];
    return (await gitOk(repo, args, { env, input: `${message}\n` })).trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function pushFenced(
  where: SharedBranch,
  tip: string,
  commit: string,
  fence: Fence | undefined,
): Promise<BranchEditOutcome | { kind: 'retry'; message: string }> {
  const branchRef = `refs/heads/${where.branch}`;
  const args = ['push', '--porcelain', '--no-verify', '--atomic'];
  args.push(`--force-with-lease=${branchRef}:${tip}`);
  if (fence) args.push(`--force-with-lease=${claimRefOf(fence.item)}:${fence.expected}`);
  args.push(where.remote, `${commit}:${branchRef}`);
  if (fence) args.push(`${fence.commit}:${claimRefOf(fence.item)}`);
  const run = await runGit(where.repo, args);
  if (run.code === 0) return { kind: 'pushed', commit };
  const lines = run.stdout.split('\n').filter((l) => l.startsWith('!'));
  if (lines.length === 0) return { kind: 'unreachable', message: oneLine(run.stderr) };
  if (fence && (await leaseMoved(where, fence))) return { kind: 'fenced' };
  return { kind: 'retry', message: lines.join('; ') };
}

/** Whether the fence's lease is no longer at the commit it expected. */
async function leaseMoved(where: SharedBranch, fence: Fence): Promise<boolean> {
  const run = await runGit(where.repo, ['ls-remote', where.remote, claimRefOf(fence.item)]);
  if (run.code !== 0) return false;
  return run.stdout.split('\t')[0]?.trim() !== fence.expected;
}
