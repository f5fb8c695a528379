import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimRefOf, newNonce, type Holder } from '../../src/claims/lease.js';
import { fetchClaims, leaseCommit, swapClaimRef } from '../../src/claims/claim-refs.js';
import { GitClaimStore } from '../../src/claims/git-claim-store.js';
import { preReceive, sharedRemote, type SharedRemote } from './git-remote.js';

const hostA: Holder = { host: 'a', instance: 'i1', boot: 'b1' };
const hostB: Holder = { host: 'b', instance: 'i2', boot: 'b2' };

let remote: SharedRemote;
/** One clock for both: the tests that step the wall clock alone set `wallStep`. */
let clock = 1_000_000;
let wallStep = 0;
const now = () => clock + wallStep;
const monotonic = () => clock;

function store(repo: string, me: Holder, leaseMs = 30_000): GitClaimStore {
  return new GitClaimStore({ repo, remote: 'origin', branch: 'main', me, leaseMs, now, monotonic });
}

beforeEach(() => {
  remote = sharedRemote();
  clock = 1_000_000;
  wallStep = 0;
});
afterEach(() => remote.cleanup());

describe('claims on a shared remote', () => {
  it('lets one host claim an item; the other loses the compare-and-swap', async () => {
    const a = store(remote.host('a'), hostA);
    const b = store(remote.host('b'), hostB);
    const first = await a.claim('item-1', 'sessions/x.md', 'implementation');
    const second = await b.claim('item-1', 'sessions/x.md', 'implementation');
    expect(first.won).toBe(true);
    expect(second).toEqual({ won: false, outcome: { kind: 'lost' } });
    const seen = await b.refresh();
    expect(seen).toHaveLength(1);
    expect(seen![0]).toMatchObject({ item: 'item-1', judgement: 'held' });
    expect(seen![0]!.record).toMatchObject({ holder: hostA, attempt: 1, state: 'held' });
    expect(remote.git(remote.bare, 'for-each-ref', '--format=%(refname)')).toContain(
      'refs/engine/claims/item-1',
    );
  });

  it('takes a claim ref the remote could not lock for a remote out of reach, not a refusal', async () => {
    const a = store(remote.host('a'), hostA);
    // A concurrent push holds the ref's lock on the remote.
    const lock = join(remote.bare, 'refs', 'engine', 'claims', 'item-1.lock');
    mkdirSync(dirname(lock), { recursive: true });
    writeFileSync(lock, '');
    const first = await a.claim('item-1', 'sessions/x.md', 'implementation');
    expect(first).toMatchObject({ won: false, outcome: { kind: 'unreachable' } });
    rmSync(lock);
    expect((await a.claim('item-1', 'sessions/x.md', 'implementation')).won).toBe(true);
  });

  it('takes over only once the lease ran out on its own observation, and fences the old holder', async () => {
    const a = store(remote.host('a'), hostA, 10_000);
    const b = store(remote.host('b'), hostB, 10_000);
    const held = await a.claim('item-2', 'sessions/y.md', 'fix');
    if (!held.won) throw new Error('claim lost');
    // The record's renewal is old, but b has only just seen the ref: not expired for b.
    clock += 60_000;
    let [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('held');
    expect(await b.takeOver(seen!)).toEqual({ won: false, outcome: { kind: 'not-expired' } });
    // A renewal moves the ref: b's observation starts again.
    clock += 9_000;
    const renewed = await a.renew(held.lease);
    if (!renewed.won) throw new Error('renewal lost');
    clock += 9_000;
    [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('held');
    clock += 10_000;
    [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('expired');
    const taken = await b.takeOver(seen!);
    expect(taken.won && taken.lease.record).toMatchObject({ holder: hostB, attempt: 2 });
    // The old holder's renewal and its `done` are refused: the lease moved on.
    expect(await a.renew(renewed.lease)).toEqual({ won: false, outcome: { kind: 'lost' } });
    expect(await a.end(renewed.lease, 'done')).toEqual({ won: false, outcome: { kind: 'lost' } });
  });

  it('a holder whose clock runs ahead keeps its claim for at most one more lease', async () => {
    const a = store(remote.host('a'), hostA, 10_000);
    const b = store(remote.host('b'), hostB, 10_000);
    wallStep = 3_600_000;
    const held = await a.claim('item-3', 'f.md', 'fix');
    wallStep = 0;
    expect(held.won).toBe(true);
    await b.refresh();
    clock += 15_000;
    let [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('held');
    clock += 5_000;
    [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('expired');
  });

  it('takes nothing over when its own wall clock steps forward', async () => {
    const a = store(remote.host('a'), hostA, 10_000);
    const b = store(remote.host('b'), hostB, 10_000);
    expect((await a.claim('item-6', 'f.md', 'fix')).won).toBe(true);
    await b.refresh();
    wallStep = 3_600_000;
    clock += 1_000;
    const [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('held');
  });

  it('counts no time it could not fetch in: after an outage every observation starts again', async () => {
    const a = store(remote.host('a'), hostA, 10_000);
    const repoB = remote.host('b');
    const b = store(repoB, hostB, 10_000);
    expect((await a.claim('item-7', 'f.md', 'fix')).won).toBe(true);
    await b.refresh();
    remote.git(repoB, 'remote', 'set-url', 'origin', `${remote.dir}/gone.git`);
    clock += 60_000;
    expect(await b.refresh()).toBeNull();
    remote.git(repoB, 'remote', 'set-url', 'origin', remote.bare);
    let [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('held');
    clock += 20_000;
    [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('expired');
  });

  it('never claims twice, even when both writes would make the same commit', async () => {
    const a = store(remote.host('a'), hostA);
    expect((await a.claim('item-8', 'f.md', 'fix')).won).toBe(true);
    expect(await a.claim('item-8', 'f.md', 'fix')).toEqual({
      won: false,
      outcome: { kind: 'lost' },
    });
  });

  it('keeps its lease when a renewal landed but its answer was lost', async () => {
    const a = store(remote.host('a'), hostA);
    const claimed = await a.claim('item-9', 'f.md', 'fix');
    if (!claimed.won) throw new Error('claim lost');
    const landed = await a.renew(claimed.lease);
    expect(landed.won).toBe(true);
    // The daemon never heard of `landed`: it renews from the older commit.
    const again = await a.renew(claimed.lease);
    expect(again.won && again.lease.record.attempt).toBe(1);
  });

  it('counts a done of its own that landed with its answer lost, and an end alike', async () => {
    const a = store(remote.host('a'), hostA, 10_000);
    const held = await a.claim('item-7', 'README.md', 'fix');
    if (!held.won) throw new Error('claim lost');
    const claimed = await a.writeFenced(held.lease, 'README.md', (t) => `${t}#claimed-fix\n`, 'c');
    expect(claimed.outcome.kind).toBe('pushed');
    const done = (t: string) =>
      t.includes('#claimed-fix') ? t.replace('#claimed-fix', '#done-fix') : null;
    const landed = await a.writeFenced(claimed.lease, 'README.md', done, 'done', 'done');
    expect(landed.outcome.kind).toBe('pushed');
    // The daemon never heard of `landed`: it publishes the done again from the lease before.
    const again = await a.writeFenced(claimed.lease, 'README.md', done, 'done', 'done');
    expect(again.lease).toEqual(landed.lease);
    expect(again.outcome.kind).toBe('unchanged');
    // An end whose answer was lost, ended again from the lease before it: won, as it landed.
    const other = await a.claim('item-8', 'f.md', 'fix');
    if (!other.won) throw new Error('claim lost');
    const ended = await a.end(other.lease, 'done');
    expect(ended.won).toBe(true);
    expect(await a.end(other.lease, 'done')).toEqual(ended);
  });

  it('a renewal that finds its own done landed unheard gets that ended lease, not "lost"', async () => {
    const a = store(remote.host('a'), hostA, 10_000);
    const held = await a.claim('item-10', 'README.md', 'fix');
    if (!held.won) throw new Error('claim lost');
    const landed = await a.writeFenced(held.lease, 'README.md', (t) => `${t}done\n`, 'd', 'done');
    expect(landed.lease.record.state).toBe('done');
    // The keeper's renewal, queued behind the done whose answer it never heard.
    const renewed = await a.renew(held.lease);
    expect(renewed).toEqual({ won: true, lease: landed.lease });
    expect(await a.doneOfMine(held.lease)).toEqual(landed.lease);
  });

  it('goes on with a write that met renewals of its lease landed unheard, twice', async () => {
    const repo = remote.host('a');
    const a = store(repo, hostA, 10_000);
    const held = await a.claim('item-9', 'README.md', 'fix');
    if (!held.won) throw new Error('claim lost');
    // Two renewals of this lease that landed while their answers were lost, made ahead.
    const unheard: string[] = [];
    let parent = held.lease.commit;
    for (let i = 0; i < 2; i++) {
      parent = await leaseCommit(repo, { ...held.lease.record, nonce: newNonce() }, parent);
      unheard.push(parent);
    }
    let tries = 0;
    const edit = (text: string) => {
      const next = unheard[tries++];
      if (next !== undefined)
        remote.git(repo, 'push', '-q', '--force', 'origin', `${next}:${claimRefOf('item-9')}`);
      return `${text}#claimed-fix\n`;
    };
    const written = await a.writeFenced(held.lease, 'README.md', edit, 'claim');
    expect(written.outcome.kind).toBe('pushed');
    expect(tries).toBe(3);
    expect(written.lease.record.attempt).toBe(1);
  });

  it('a done claim is never taken again', async () => {
    const a = store(remote.host('a'), hostA, 10_000);
    const b = store(remote.host('b'), hostB, 10_000);
    const held = await a.claim('item-4', 'f.md', 'fix');
    if (!held.won) throw new Error('claim lost');
    expect((await a.end(held.lease, 'done')).won).toBe(true);
    await b.refresh();
    clock += 60_000;
    const [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('done');
    expect(await b.takeOver(seen!)).toEqual({ won: false, outcome: { kind: 'not-expired' } });
  });

  it('ends a done that no longer applies as released: the item may be claimed again', async () => {
    const repo = remote.host('a');
    const a = store(repo, hostA, 10_000);
    const held = await a.claim('item-5', 'README.md', 'fix');
    if (!held.won) throw new Error('claim lost');
    const written = await a.writeFenced(held.lease, 'README.md', () => null, 'done', 'done');
    expect(written.outcome.kind).toBe('not-applicable');
    expect(written.lease.record.state).toBe('released');
    const b = store(remote.host('b'), hostB, 10_000);
    const [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('free');
    expect((await b.takeOver(seen!)).won).toBe(true);
  });

  it('keeps the lease of a done the server refuses, even with no branch pushed beside it', async () => {
    const repo = remote.host('a');
    const a = store(repo, hostA, 10_000);
    const held = await a.claim('item-6', 'README.md', 'fix');
    if (!held.won) throw new Error('claim lost');
    // A protected branch: the claim refs may move, the branch may not.
    preReceive(
      remote,
      'while read old new ref; do [ "$ref" = refs/heads/main ] && exit 1; done\nexit 0',
    );
    const written = await a.writeFenced(
      held.lease,
      'README.md',
      (t) => `${t}done\n`,
      'done',
      'done',
    );
    expect(written.outcome.kind).toBe('refused');
    // Ended as done, the branch would keep its claim under a done ref: stuck for good.
    expect(written.lease.record.state).toBe('held');
    const [seen] = (await store(remote.host('b'), hostB, 10_000).refresh())!;
    expect(seen!.record?.state).toBe('held');
  });

  it('says the remote is unreachable rather than "no claims" or "lost"', async () => {
    const repo = remote.host('a');
    remote.git(repo, 'remote', 'set-url', 'origin', `${remote.dir}/gone.git`);
    expect(await fetchClaims({ repo, remote: 'origin' })).toBeNull();
    const a = store(repo, hostA);
    const result = await a.claim('item-5', 'f.md', 'fix');
    expect(result.won).toBe(false);
    expect(!result.won && result.outcome.kind).toBe('unreachable');
  });

  it('refuses an item id or remote that could be read as something else', async () => {
    for (const bad of ['../x', '-x', 'A', 'a/b', '', 'x'.repeat(65)]) {
      expect(() => claimRefOf(bad)).toThrow(RangeError);
    }
    const repo = remote.host('a');
    await expect(
      swapClaimRef({ repo, remote: '--upload-pack=x' }, 'ok', null, null),
    ).rejects.toThrow(RangeError);
  });
});
