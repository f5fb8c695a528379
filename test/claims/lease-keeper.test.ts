/**
 * A lease kept alive by renewals is never taken over, however long its agent works; once its
 * holder stops renewing, another host takes it over after a lease, and the old holder, renewing
 * again, learns that it lost it.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { GitClaimStore } from '../../src/claims/git-claim-store.js';
import { LeaseKeeper } from '../../src/claims/lease-keeper.js';
import { waitFor } from '../helpers/wait-for.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const LEASE_MS = 3_000;
let remote: SharedRemote;
const keepers: LeaseKeeper[] = [];

beforeEach(() => {
  remote = sharedRemote();
});
afterEach(async () => {
  for (const keeper of keepers.splice(0)) await keeper.stop();
  remote.cleanup();
});

function host(name: string): GitClaimStore {
  return new GitClaimStore({
    repo: remote.host(name),
    remote: 'origin',
    branch: 'main',
    me: { host: name, instance: name, boot: 'b' },
    leaseMs: LEASE_MS,
  });
}

it('keeps a renewed lease from a takeover, and reports it lost once taken over', async () => {
  const a = host('a');
  const b = host('b');
  const lost: string[] = [];
  const keeper = new LeaseKeeper(a, {
    renewEveryMs: LEASE_MS / 3,
    onLost: (item) => lost.push(item),
  });
  keepers.push(keeper);
  const claimed = await a.claim('item-1', 'f.md', 'fix');
  if (!claimed.won) throw new Error('claim lost');
  keeper.hold(claimed.lease);
  // For two leases, b keeps looking and never sees it expired.
  const until = Date.now() + 2 * LEASE_MS;
  while (Date.now() < until) {
    const [seen] = (await b.refresh())!;
    expect(seen!.judgement).toBe('held');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(keeper.current('item-1')!.commit).not.toBe(claimed.lease.commit);
  // a stops renewing (its host froze): b takes the lease over after a lease.
  const frozen = keeper.current('item-1')!;
  await keeper.drop('item-1');
  const taken = await waitFor(
    async () => {
      const [seen] = (await b.refresh())!;
      const result = await b.takeOver(seen!);
      return result.won && result.lease;
    },
    { timeoutMs: 20 * LEASE_MS, intervalMs: 50, message: 'a takeover' },
  );
  expect(taken.record).toMatchObject({ attempt: 2, holder: { host: 'b' } });
  // a thaws and renews: it learns the lease is lost.
  keeper.hold(frozen);
  await waitFor(() => lost.includes('item-1'), { timeoutMs: 10 * LEASE_MS, message: 'lost' });
  expect(keeper.current('item-1')).toBeUndefined();
});

it('runs the writes of one lease one at a time', async () => {
  const a = host('a');
  const keeper = new LeaseKeeper(a, {
    renewEveryMs: 5,
    onLost: () => expect.fail('lost its own lease'),
  });
  keepers.push(keeper);
  const claimed = await a.claim('item-2', 'f.md', 'fix');
  if (!claimed.won) throw new Error('claim lost');
  keeper.hold(claimed.lease);
  // Renewals every 5 ms race these writes: none may lose to this host's own renewal.
  for (let n = 0; n < 10; n++) {
    const won = await keeper.use('item-2', async (lease) => {
      const renewed = await a.renew(lease);
      return { lease: renewed.won ? renewed.lease : null, value: renewed.won };
    });
    expect(won).toBe(true);
  }
});

it('stops renewing a lease once a write ended it', async () => {
  const a = host('a');
  const keeper = new LeaseKeeper(a, { renewEveryMs: 20, onLost: () => expect.fail('lost') });
  keepers.push(keeper);
  const claimed = await a.claim('item-3', 'f.md', 'fix');
  if (!claimed.won) throw new Error('claim lost');
  keeper.hold(claimed.lease);
  const ended = await keeper.use('item-3', async (lease) => {
    const result = await a.end(lease, 'done');
    return { lease: result.won ? result.lease : null, value: result.won };
  });
  expect(ended).toBe(true);
  expect(keeper.current('item-3')).toBeUndefined();
  const [seen] = (await a.refresh())!;
  expect(seen!.record).toMatchObject({ state: 'done' });
});

it('says once that its renewals cannot reach the remote, and once that they reach it again', async () => {
  const repo = remote.host('a');
  const a = new GitClaimStore({
    repo,
    remote: 'origin',
    branch: 'main',
    me: { host: 'a', instance: 'a', boot: 'b' },
    leaseMs: LEASE_MS,
  });
  let renewals = 0;
  const renew = a.renew.bind(a);
  a.renew = (lease) => {
    renewals++;
    return renew(lease);
  };
  const said: string[] = [];
  const keeper = new LeaseKeeper(a, {
    renewEveryMs: 200,
    onLost: () => expect.fail('lost its own lease'),
    onUnreachable: () => said.push('unreachable'),
    onRenewedAgain: () => said.push('again'),
  });
  keepers.push(keeper);
  const claimed = await a.claim('item-3', 'f.md', 'fix');
  if (!claimed.won) throw new Error('claim lost');
  const url = remote.git(repo, 'remote', 'get-url', 'origin').trim();
  remote.git(repo, 'remote', 'set-url', 'origin', `${url}-gone`);
  keeper.hold(claimed.lease);
  // Tried again every 50 ms or so: said once, not at every try.
  await waitFor(() => renewals >= 6, { timeoutMs: 20_000, message: 'six renewals tried' });
  expect(said).toEqual(['unreachable']);
  remote.git(repo, 'remote', 'set-url', 'origin', url);
  await waitFor(() => said.length === 2, { timeoutMs: 20_000, message: 'renewed again' });
  expect(said).toEqual(['unreachable', 'again']);
});
