import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { GitClaimStore } from '../../src/claims/git-claim-store.js';
import { claimRefOf } from '../../src/claims/lease.js';
import { editOnSharedBranch } from '../../src/claims/shared-branch.js';
import { swapTags } from '../../src/tags/edit-tags.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const REQUEST = 'sessions/fix-login.md';
let remote: SharedRemote;

beforeEach(() => {
  remote = sharedRemote({ [REQUEST]: '# Fix login\n\n**Tags**: #delegated-fix\n\nBody.\n' });
});
afterEach(() => remote.cleanup());

function remoteText(path: string): string {
  return remote.git(remote.bare, 'show', `main:${path}`);
}

/** A human's edit, committed and pushed from a clone of their own. */
function humanPush(path: string, change: (text: string) => string): void {
  const human = remote.host(`human-${Math.random().toString(36).slice(2)}`);
  const file = join(human, path);
  writeFileSync(file, change(readFileSync(file, 'utf8')));
  remote.git(human, 'commit', '-qam', 'human edit');
  remote.git(human, 'push', '-q', 'origin', 'main');
}

const claimTag = (text: string) =>
  text.includes('#delegated-fix') ? swapTags(text, ['#delegated-fix'], '#claimed-fix') : null;
const where = (repo: string) => ({ repo, remote: 'origin', branch: 'main' });

it('edits the file on the shared branch without touching the host working tree', async () => {
  const host = remote.host('h1');
  const head = remote.git(host, 'rev-parse', 'HEAD');
  const outcome = await editOnSharedBranch(where(host), REQUEST, claimTag, 'claim');
  expect(outcome.kind).toBe('pushed');
  expect(remoteText(REQUEST)).toContain('**Tags**: #claimed-fix');
  expect(readFileSync(join(host, REQUEST), 'utf8')).toContain('#delegated-fix');
  expect(remote.git(host, 'rev-parse', 'HEAD')).toBe(head);
  expect(remote.git(host, 'status', '--porcelain')).toBe('');
  // The human's remote-tracking ref stays where the human's own fetch left it.
  expect(remote.git(host, 'rev-parse', 'refs/remotes/origin/main')).toBe(head);
});

it('says a push the server refuses is refused, without retrying it as a race', async () => {
  const host = remote.host('h1');
  const hook = join(remote.bare, 'hooks', 'pre-receive');
  writeFileSync(hook, '#!/bin/sh\necho protected >&2\nexit 1\n', { mode: 0o755 });
  const outcome = await editOnSharedBranch(where(host), REQUEST, claimTag, 'claim');
  expect(outcome.kind).toBe('refused');
  expect(remoteText(REQUEST)).toContain('#delegated-fix');
});

it('edits no symlink and no text that is not UTF-8', async () => {
  const human = remote.host('human');
  symlinkSync('fix-login.md', join(human, 'sessions/link.md'));
  writeFileSync(
    join(human, 'sessions/latin1.md'),
    Buffer.from('**Tags**: #delegated-fix caf\xe9\n', 'latin1'),
  );
  remote.git(human, 'add', '.');
  remote.git(human, 'commit', '-qm', 'odd files');
  remote.git(human, 'push', '-q', 'origin', 'main');
  const host = remote.host('h1');
  for (const path of ['sessions/link.md', 'sessions/latin1.md']) {
    expect(await editOnSharedBranch(where(host), path, claimTag, 'claim')).toEqual({
      kind: 'not-applicable',
    });
  }
});

it('keeps a human commit pushed meanwhile, and applies its edit on top of it', async () => {
  const host = remote.host('h1');
  let raced = false;
  const outcome = await editOnSharedBranch(
    where(host),
    REQUEST,
    (text) => {
      // The human pushes between the daemon's fetch and its push, once.
      if (!raced) {
        raced = true;
        humanPush(REQUEST, (t) => t.replace('Body.', 'Body, edited by a human.'));
      }
      return claimTag(text);
    },
    'claim',
  );
  expect(outcome.kind).toBe('pushed');
  const text = remoteText(REQUEST);
  expect(text).toContain('Body, edited by a human.');
  expect(text).toContain('**Tags**: #claimed-fix');
  expect(remote.git(remote.bare, 'log', '--format=%s', 'main')).toMatch(/^claim\nhuman edit\n/);
});

it('gives up an edit that no longer applies, leaving the human text', async () => {
  const host = remote.host('h1');
  humanPush(REQUEST, (t) => t.replace('#delegated-fix', '#needs-fix'));
  expect(await editOnSharedBranch(where(host), REQUEST, claimTag, 'claim')).toEqual({
    kind: 'not-applicable',
  });
  expect(remoteText(REQUEST)).toContain('**Tags**: #needs-fix');
  expect(await editOnSharedBranch(where(host), 'sessions/none.md', claimTag, 'x')).toEqual({
    kind: 'gone',
  });
});

it('moves the branch only with the lease: a host whose lease moved on is fenced', async () => {
  let clock = 0;
  const now = () => clock;
  const options = { remote: 'origin', branch: 'main', leaseMs: 1_000, now, monotonic: now };
  const a = new GitClaimStore({
    ...options,
    repo: remote.host('a'),
    me: { host: 'a', instance: '1', boot: 'x' },
  });
  const b = new GitClaimStore({
    ...options,
    repo: remote.host('b'),
    me: { host: 'b', instance: '2', boot: 'y' },
  });
  const claimed = await a.claim('fix-login', REQUEST, 'fix');
  if (!claimed.won) throw new Error('claim lost');
  const written = await a.writeFenced(claimed.lease, REQUEST, claimTag, 'claim');
  expect(written.outcome.kind).toBe('pushed');
  expect(written.lease.commit).not.toBe(claimed.lease.commit);
  // a goes quiet; b takes the lease over once it expired.
  await b.refresh();
  clock += 5_000;
  const [seen] = (await b.refresh())!;
  expect((await b.takeOver(seen!)).won).toBe(true);
  const before = remote.git(remote.bare, 'rev-parse', 'main');
  const late = await a.writeFenced(
    written.lease,
    REQUEST,
    (t) => swapTags(t, ['#claimed-fix'], '#done-fix'),
    'done',
    'done',
  );
  expect(late.outcome).toEqual({ kind: 'fenced' });
  expect(remote.git(remote.bare, 'rev-parse', 'main')).toBe(before);
  expect(remoteText(REQUEST)).toContain('#claimed-fix');
});

it('renews its lease between the tries of a write that keeps losing races to other pushes', async () => {
  let clock = 0;
  const now = () => clock;
  const a = new GitClaimStore({
    remote: 'origin',
    branch: 'main',
    leaseMs: 1_000,
    now,
    monotonic: now,
    repo: remote.host('a'),
    me: { host: 'a', instance: '1', boot: 'x' },
  });
  const claimed = await a.claim('fix-login', REQUEST, 'fix');
  if (!claimed.won) throw new Error('claim lost');
  // Each try takes 400 ms of a 1,000 ms lease, and the first two lose the race to a human's
  // push: without renewals between them the lease would run out while its holder writes.
  const leaseRefs: string[] = [];
  let tries = 0;
  const racing = (text: string) => {
    leaseRefs.push(remote.git(remote.bare, 'rev-parse', claimRefOf('fix-login')));
    clock += 400;
    if (++tries <= 2) humanPush(REQUEST, (t) => `${t}A human's line.\n`);
    return claimTag(text);
  };
  const written = await a.writeFenced(claimed.lease, REQUEST, racing, 'claim');
  expect(written.outcome.kind).toBe('pushed');
  expect(tries).toBe(3);
  // The lease moved before each later try: renewed while the write was under way.
  expect(new Set(leaseRefs).size).toBe(3);
  expect(remote.git(remote.bare, 'rev-parse', claimRefOf('fix-login')).trim()).toBe(
    written.lease.commit,
  );
  expect(remoteText(REQUEST)).toContain('#claimed-fix');
});

it('tries again a push whose transaction the remote could not commit (a ref locked by another push)', async () => {
  const a = new GitClaimStore({
    remote: 'origin',
    branch: 'main',
    leaseMs: 60_000,
    repo: remote.host('a'),
    me: { host: 'a', instance: '1', boot: 'x' },
  });
  const claimed = await a.claim('fix-login', REQUEST, 'fix');
  if (!claimed.won) throw new Error('claim lost');
  // A concurrent push holds the branch's lock on the remote during the first try.
  const lock = join(remote.bare, 'refs', 'heads', 'main.lock');
  writeFileSync(lock, '');
  let tries = 0;
  const edit = (text: string) => {
    if (++tries === 2) rmSync(lock);
    return claimTag(text);
  };
  const written = await a.writeFenced(claimed.lease, REQUEST, edit, 'claim');
  expect(written.outcome.kind).toBe('pushed');
  expect(tries).toBe(2);
  expect(remoteText(REQUEST)).toContain('#claimed-fix');
});
