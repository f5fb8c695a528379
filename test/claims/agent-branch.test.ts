/**
 * A re-approved item continues the agent's branch its earlier run left on the remote
 * (src/claims/agent-branch.ts): the next push of it, from any host, is a fast-forward.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { followRemoteBranch } from '../../src/claims/agent-branch.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const BRANCH = 'engine/fix/item-0123456789ab';
const REF = `refs/heads/${BRANCH}`;
let remote: SharedRemote;

beforeEach(() => {
  remote = sharedRemote();
});
afterEach(() => remote.cleanup());

/** A commit on the agent's branch in `clone`, from `from` (a commit-ish), pushed when asked. */
function work(clone: string, from: string, name: string, push = true): string {
  remote.git(clone, 'checkout', '-q', '-B', BRANCH, from);
  writeFileSync(join(clone, `${name}.txt`), `${name}\n`);
  remote.git(clone, 'add', '.');
  remote.git(clone, 'commit', '-qm', name);
  if (push) remote.git(clone, 'push', '-q', 'origin', BRANCH);
  remote.git(clone, 'checkout', '-q', 'main');
  return remote.git(clone, 'rev-parse', REF).trim();
}

const local = (clone: string) =>
  remote.git(clone, 'for-each-ref', '--format=%(objectname)', REF).trim();
const where = (repo: string) => ({ repo, remote: 'origin' });

/** A's branch on the remote, fetched by b and checked out in b's worktree `b-agent`. */
function checkedOutOnB(): { a: string; b: string; tree: string } {
  const a = remote.host('a');
  const b = remote.host('b');
  work(a, 'main', 'first');
  remote.git(b, 'fetch', '-q', 'origin', `${BRANCH}:${BRANCH}`);
  const tree = join(remote.dir, 'b-agent');
  remote.git(b, 'worktree', 'add', '-q', tree, BRANCH);
  return { a, b, tree };
}

it('makes the branch here from the remote’s when this clone has none, and does nothing without one', async () => {
  const b = remote.host('b');
  expect(await followRemoteBranch(where(b), BRANCH)).toBeNull();
  expect(local(b)).toBe('');
  const first = work(remote.host('a'), 'main', 'first');
  expect(await followRemoteBranch(where(b), BRANCH)).toBeNull();
  expect(local(b)).toBe(first);
});

it('moves a branch here that is behind the remote’s, and leaves one with commits of its own', async () => {
  const a = remote.host('a');
  const b = remote.host('b');
  const first = work(a, 'main', 'first');
  remote.git(b, 'fetch', '-q', 'origin', `${BRANCH}:${BRANCH}`);
  const second = work(a, BRANCH, 'second');
  expect(await followRemoteBranch(where(b), BRANCH)).toBeNull();
  expect(local(b)).toBe(second);
  expect(second).not.toBe(first);
  // b's own commit, never pushed: left alone, and said.
  const own = work(b, BRANCH, 'own', false);
  work(a, BRANCH, 'third');
  expect(await followRemoteBranch(where(b), BRANCH)).toMatch(/commits the remote's lacks/);
  expect(local(b)).toBe(own);
});

it('fast-forwards a worktree here that has the branch checked out, keeping its changes', async () => {
  const { a, b, tree } = checkedOutOnB();
  // The earlier run's leftover, uncommitted, in a file the later run did not touch.
  writeFileSync(join(tree, 'first.txt'), 'edited here\n');
  const second = work(a, BRANCH, 'second');
  expect(await followRemoteBranch(where(b), BRANCH)).toBeNull();
  expect(local(b)).toBe(second);
  expect(readFileSync(join(tree, 'second.txt'), 'utf8')).toBe('second\n');
  expect(readFileSync(join(tree, 'first.txt'), 'utf8')).toBe('edited here\n');
});

it('leaves a worktree here whose uncommitted changes clash with the remote’s commits, and says so', async () => {
  const { a, b, tree } = checkedOutOnB();
  const before = local(b);
  writeFileSync(join(tree, 'second.txt'), 'mine\n');
  work(a, BRANCH, 'second');
  expect(await followRemoteBranch(where(b), BRANCH)).toMatch(/could not be fast-forwarded/);
  expect(local(b)).toBe(before);
  expect(readFileSync(join(tree, 'second.txt'), 'utf8')).toBe('mine\n');
});

it('moves the branch of a worktree here whose directory was deleted by hand', async () => {
  const { a, b, tree } = checkedOutOnB();
  rmSync(tree, { recursive: true, force: true });
  const second = work(a, BRANCH, 'second');
  expect(await followRemoteBranch(where(b), BRANCH)).toBeNull();
  expect(local(b)).toBe(second);
});
