/**
 * `engine claims list|release|prune` through the built CLI, against a bare repository as the
 * shared remote (a path, and `git daemon` on 127.0.0.1), with claims written by the real store.
 */
import { join } from 'node:path';
import { symlinkSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitClaimStore } from '../../src/claims/git-claim-store.js';
import { itemIdOf } from '../../src/claims/item-id.js';
import { decodeLease, type Holder } from '../../src/claims/lease.js';
import { fetchClaims } from '../../src/claims/claim-refs.js';
import { pruneClaims } from '../../src/claims/prune-claims.js';
import type { ClaimView } from '../../src/claims/claims-view.js';
import { runCli } from '../helpers/run-cli.js';
import { gitDaemon } from './git-daemon.js';
import { preReceive, sharedRemote, type SharedRemote } from './git-remote.js';

const buildBox: Holder = { host: 'build-box', instance: 'inst-b', boot: 'boot-b' };
const laptop: Holder = { host: 'laptop', instance: 'inst-l', boot: 'boot-l' };
const HOUR = 3600_000;

let remote: SharedRemote;
let human: string;

/** A host's store whose records say they were written `agoMs` before now. */
function hostStore(me: Holder, agoMs = 0, leaseMs = 60_000): GitClaimStore {
  const repo = remote.host(`${me.host}-${Math.random().toString(16).slice(2)}`);
  const now = () => Date.now() - agoMs;
  return new GitClaimStore({ repo, remote: 'origin', branch: 'main', me, leaseMs, now });
}

async function held(me: Holder, item: string, agoMs = 0) {
  const claim = await hostStore(me, agoMs).claim(item, `sessions/${item}.md`, 'fix');
  if (!claim.won) throw new Error(`claim of ${item} lost`);
  return claim.lease;
}

async function done(me: Holder, item: string, agoMs = 0) {
  const store = hostStore(me, agoMs);
  const claim = await store.claim(item, `sessions/${item}.md`, 'fix');
  if (!claim.won) throw new Error(`claim of ${item} lost`);
  const ended = await store.end(claim.lease, 'done');
  if (!ended.won) throw new Error(`end of ${item} lost`);
}

const claims = (cmd: string[], cwd = human) => runCli(['claims', ...cmd], { cwd });
/** The text with its wrapped lines joined again. */
const flat = (text: string) => text.replace(/\s*\n\s+/g, ' ');
/** The characters of `text` a terminal would act on, but newlines. */
const rawControls = (text: string) =>
  [...text].filter((c) => c !== '\n' && /[\p{Cc}\p{Zl}\p{Zp}]/u.test(c));
const seenRefs = () =>
  remote.git(human, 'for-each-ref', '--format=%(refname)', 'refs/engine/seen/');
const remoteRefs = () => remote.git(remote.bare, 'for-each-ref', '--format=%(refname)');

beforeEach(() => {
  remote = sharedRemote({
    'directives/engine.json': '{}\n',
    'sessions/fix-login.md': '# Fix login\n\n**Tags**: #done-fix\n',
  });
  human = remote.host('human');
});
afterEach(() => remote.cleanup());

describe('engine claims list', () => {
  it('says there are no claims, explicitly', async () => {
    const run = await claims(['list']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('No claims on remote "origin" (fetched just now).\n');
    const json = await claims(['list', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ remote: 'origin', claims: [] });
  });

  it("lists every host's claims: holder, attempt, lease and the renewal's age by the record's clock", async () => {
    await held(buildBox, 'fix-a', 5 * 60_000);
    await done(laptop, 'fix-b');
    const run = await claims(['list']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Claims on remote "origin" (2, fetched just now):');
    expect(run.stdout).toContain('fix-a  sessions/fix-a.md  #fix');
    expect(flat(run.stdout)).toContain(
      "held, attempt 1, by build-box (instance inst-b, boot boot-b); lease 1 min; renewed 5 min ago by the record's clock",
    );
    expect(run.stdout).toMatch(/done, attempt 1, by laptop \(instance inst-l, boot boot-l\)/);
    const json = JSON.parse((await claims(['list', '--json'])).stdout) as { claims: ClaimView[] };
    expect(json.claims.map((c) => [c.item, c.state, c.holder?.host, c.attempt])).toEqual([
      ['fix-a', 'held', 'build-box', 1],
      ['fix-b', 'done', 'laptop', 1],
    ]);
    expect(json.claims[0]!.renewedAgoMs).toBeGreaterThanOrEqual(5 * 60_000);
  });

  it("shows a record's control characters and line separators as such, never raw", async () => {
    const evil = { host: 'evil\u001b[2J\u2028forged', instance: 'i\rj', boot: 'b\u2029' };
    const store = hostStore(evil);
    expect((await store.claim('fix-e', 'sessions/e\nforged.md', 'fix\u0007')).won).toBe(true);
    const run = await claims(['list']);
    expect(rawControls(run.stdout)).toEqual([]);
    expect(flat(run.stdout)).toContain('fix-e  sessions/e \u21b5 forged.md  #fix\uFFFD');
    expect(flat(run.stdout)).toContain(
      'by evil\uFFFD[2J\uFFFDforged (instance i\uFFFDj, boot b\uFFFD)',
    );
    const refused = await claims(['release', 'fix-e']);
    expect(rawControls(refused.stderr)).toEqual([]);
    expect(flat(refused.stderr)).toContain('fix-e (sessions/e \u21b5 forged.md #fix\uFFFD)');
  });

  it("uses engine.json's claimsRemote unless --remote says otherwise", async () => {
    await held(buildBox, 'fix-a');
    writeFileSync(join(human, 'directives', 'engine.json'), '{"claimsRemote": "shared"}\n');
    remote.git(human, 'remote', 'add', 'shared', remote.bare);
    remote.git(human, 'remote', 'set-url', 'origin', join(remote.dir, 'gone.git'));
    const run = await claims(['list']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('Claims on remote "shared" (1, fetched');
    expect((await claims(['list', '--remote', 'origin'])).code).toBe(1);
  });

  it('an unreachable remote is an error and exit 1, never an empty list', async () => {
    await held(buildBox, 'fix-a');
    remote.git(human, 'remote', 'set-url', 'origin', join(remote.dir, 'gone.git'));
    const run = await claims(['list']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      'cannot fetch the claims of remote "origin": it could not be reached',
    );
    const missing = await claims(['list', '--remote', 'shared']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('has no remote "shared"');
  });

  it('reads the claims from git daemon on 127.0.0.1, and fails once it is gone', async () => {
    await held(buildBox, 'fix-a');
    const server = await gitDaemon(remote.dir, 'remote.git', { receivePack: false });
    try {
      remote.git(human, 'remote', 'set-url', 'origin', server.url('remote.git'));
      const run = await claims(['list']);
      expect(run.stderr).toBe('');
      expect(run.stdout).toContain('fix-a  sessions/fix-a.md  #fix');
    } finally {
      await server.stop();
    }
    const gone = await claims(['list']);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toBe('');
  });
});

describe('engine claims release', () => {
  it('refuses a live claim without --force, naming whose it is; --force deletes the ref', async () => {
    await held(buildBox, 'fix-a');
    const refused = await claims(['release', 'fix-a']);
    expect(refused.code).toBe(1);
    expect(flat(refused.stderr)).toMatch(
      /not released: fix-a \(sessions\/fix-a\.md #fix\): held, attempt 1, by build-box \(instance inst-b, boot boot-b\).*renewed (just now|\d+ s ago) by the record's clock\. It is held, so it may be live whatever its record's clock says: --force/,
    );
    expect(remoteRefs()).toContain('refs/engine/claims/fix-a');
    const forced = await claims(['release', 'fix-a', '--force']);
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('released fix-a');
    expect(forced.stdout).toContain('The shared branch is unchanged');
    expect(remoteRefs()).not.toContain('refs/engine/claims/fix-a');
  });

  it('releases a done claim, named by its file, without --force', async () => {
    const item = (await itemIdOf(human, 'HEAD', 'sessions/fix-login.md'))!;
    await done(laptop, item);
    await claims(['list']);
    expect(seenRefs()).toContain(item);
    const run = await claims(['release', 'fix-login.md'], join(human, 'sessions'));
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`released ${item}`);
    expect(remoteRefs()).not.toContain(item);
    // engine status reads the seen refs: a released claim is gone from them too.
    expect(seenRefs()).not.toContain(item);
  });

  it('refuses a directory: it names no item, and no claim under it is touched', async () => {
    const item = (await itemIdOf(human, 'HEAD', 'sessions/fix-login.md'))!;
    await done(laptop, item);
    const run = await claims(['release', 'sessions/']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("sessions/: not a file in HEAD's tree, so it names no item");
    expect(remoteRefs()).toContain(item);
  });

  it('finds the item of a file named through a symlinked directory', async () => {
    const item = (await itemIdOf(human, 'HEAD', 'sessions/fix-login.md'))!;
    await done(laptop, item);
    const link = join(remote.dir, 'link');
    symlinkSync(human, link);
    const run = await claims(['release', join(link, 'sessions', 'fix-login.md')]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`released ${item}`);
  });

  it("refuses a held claim however old its record's clock says it is: the holder's clock may run behind", async () => {
    await held(buildBox, 'fix-a', 2 * 60_000);
    const run = await claims(['release', 'fix-a']);
    expect(run.code).toBe(1);
    expect(flat(run.stderr)).toContain('It is held, so it may be live');
    expect(remoteRefs()).toContain('refs/engine/claims/fix-a');
  });

  it('reports a lost race (the ref moved between its read and the delete), exit 1, ref kept', async () => {
    const first = await held(buildBox, 'fix-a', 2 * 60_000);
    // A renewal lands while the release is on the wire: the server's hook moves the ref first.
    const renewal = remote
      .git(
        remote.bare,
        'commit-tree',
        '-p',
        first.commit,
        '-m',
        'renewal',
        remote.git(remote.bare, 'rev-parse', `${first.commit}^{tree}`).trim(),
      )
      .trim();
    preReceive(
      remote,
      `env -u GIT_QUARANTINE_PATH git update-ref refs/engine/claims/fix-a ${renewal}`,
    );
    const run = await claims(['release', 'fix-a', '--force']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'not released: the claim of fix-a changed while it was being released',
    );
    expect(remote.git(remote.bare, 'rev-parse', 'refs/engine/claims/fix-a').trim()).toBe(renewal);
  });

  it('says there is no claim when the ref vanished between its read and the delete, exit 1', async () => {
    await held(buildBox, 'fix-a', 2 * 60_000);
    // Another person's release lands while this one is on the wire: the server's hook deletes
    // the ref first.
    preReceive(remote, 'env -u GIT_QUARANTINE_PATH git update-ref -d refs/engine/claims/fix-a');
    const run = await claims(['release', 'fix-a', '--force']);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('released fix-a');
    expect(run.stderr).toContain('no claim of fix-a on remote "origin"');
    expect(remoteRefs()).not.toContain('refs/engine/claims/fix-a');
  });

  it('says so when there is no claim, or the name is not an item', async () => {
    const none = await claims(['release', 'fix-z']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no claim of fix-z on remote "origin"');
    const stray = await claims(['release', 'sessions/new.md']);
    expect(stray.code).toBe(1);
    expect(stray.stderr).toContain("not a file in HEAD's tree");
  });
});

describe('engine claims prune', () => {
  it('deletes only the done claims older than --older-than (a day by default)', async () => {
    await done(laptop, 'fix-old', 25 * HOUR);
    await done(laptop, 'fix-new', 1 * HOUR);
    await held(buildBox, 'fix-held', 48 * HOUR);
    const run = await claims(['prune']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('pruned fix-old\n');
    expect(remoteRefs()).not.toContain('fix-old');
    expect(seenRefs()).not.toContain('fix-old');
    expect(seenRefs()).toContain('fix-new');
    expect(remoteRefs()).toContain('fix-new');
    const again = await claims(['prune', '--older-than', '2']);
    expect(again.stdout).toBe('No done claims older than 2 h on remote "origin" (2 claims).\n');
    expect((await claims(['prune', '--older-than', '0'])).stdout).toBe('pruned fix-new\n');
    expect(remoteRefs()).toContain('fix-held');
  });

  it('says a claim deleted by another between its read and the delete is gone, exit 0', async () => {
    await done(laptop, 'fix-old', 25 * HOUR);
    preReceive(remote, 'env -u GIT_QUARANTINE_PATH git update-ref -d refs/engine/claims/fix-old');
    const run = await claims(['prune']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('gone fix-old: deleted by another since it was read\n');
    expect(seenRefs()).not.toContain('fix-old');
  });

  it("keeps stray refs (a name no item has, another item's record) as unreadable, no stack trace", async () => {
    await done(laptop, 'fix-x', 25 * HOUR);
    const commit = remote.git(remote.bare, 'rev-parse', 'refs/engine/claims/fix-x').trim();
    remote.git(remote.bare, 'update-ref', 'refs/engine/claims/Bad_Name', commit);
    remote.git(remote.bare, 'update-ref', 'refs/engine/claims/fix-y', commit);
    const run = await claims(['prune']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('pruned fix-x\n');
    expect(remoteRefs()).toContain('refs/engine/claims/Bad_Name');
    expect(remoteRefs()).toContain('refs/engine/claims/fix-y');
    const list = JSON.parse((await claims(['list', '--json'])).stdout) as { claims: ClaimView[] };
    expect(list.claims.map((c) => [c.item, c.state])).toEqual([
      ['Bad_Name', 'unreadable'],
      ['fix-y', 'unreadable'],
    ]);
    // Given such a claim anyway, pruneClaims says why it cannot, and goes on with the others.
    const [record] = (await fetchClaims({ repo: human, remote: 'origin' }))!;
    const results = await pruneClaims({ repo: human, remote: 'origin' }, [
      {
        ...record!,
        record: { ...decodeLease(remote.git(remote.bare, 'log', '-1', '--format=%B', commit))! },
      },
    ]);
    expect(results).toEqual([
      { item: 'Bad_Name', outcome: { kind: 'refused', message: 'not an item id: "Bad_Name"' } },
    ]);
  });

  it('over git daemon that refuses pushes: nothing pruned, the refusal said, exit 1', async () => {
    await done(laptop, 'fix-old', 25 * HOUR);
    const server = await gitDaemon(remote.dir, 'remote.git', { receivePack: false });
    try {
      remote.git(human, 'remote', 'set-url', 'origin', server.url('remote.git'));
      const run = await claims(['prune']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('not pruned: fix-old');
      expect(remoteRefs()).toContain('fix-old');
    } finally {
      await server.stop();
    }
  });
});
