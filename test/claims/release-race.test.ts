/**
 * A forced `engine claims release` racing its holder's renewals on a real bare remote: one of
 * the two writes wins each round, never both over the same commit; a released lease refuses its
 * holder's next renewal and end.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchClaim } from '../../src/claims/claim-refs.js';
import { GitClaimStore } from '../../src/claims/git-claim-store.js';
import type { Holder } from '../../src/claims/lease.js';
import { releaseClaim } from '../../src/claims/release-claim.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const holder: Holder = { host: 'a', instance: 'i1', boot: 'b1' };
const ROUNDS = 40;

let remote: SharedRemote;
beforeEach(() => {
  remote = sharedRemote();
});
afterEach(() => remote.cleanup());

describe('a forced release racing the holder’s renewals', () => {
  it('lets the release or the renewal win each round, never both; a released holder is refused', async () => {
    const store = new GitClaimStore({
      repo: remote.host('a'),
      remote: 'origin',
      branch: 'main',
      me: holder,
      leaseMs: 60_000,
    });
    const person = { repo: remote.host('person'), remote: 'origin' };
    const wins = { release: 0, renewal: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const item = `race-${round}`;
      const claimed = await store.claim(item, `sessions/${item}.md`, 'fix');
      if (!claimed.won) throw new Error(`claim of ${item} lost`);
      const [released, renewed] = await Promise.all([
        releaseClaim(person, item, { force: true }),
        // Staggered across rounds, so that the renewal lands before, during and after the
        // release's read and its delete (interleaving, not a wait for a condition).
        delay((round % 10) * 8).then(() => store.renew(claimed.lease)),
      ]);
      const now = await fetchClaim(person, item);
      if (released.kind === 'released') {
        wins.release++;
        // The release deleted the commit the holder renewed from, or the renewal itself.
        if (renewed.won) expect(released.claim.commit).toBe(renewed.lease.commit);
        else expect(renewed.outcome.kind).toBe('lost');
        expect(now).toBe('absent');
        const latest = renewed.won ? renewed.lease : claimed.lease;
        expect(await store.renew(latest)).toEqual({ won: false, outcome: { kind: 'lost' } });
        expect((await store.end(latest, 'done')).won).toBe(false);
      } else {
        wins.renewal++;
        expect(released.kind).toBe('lost');
        if (!renewed.won) throw new Error(`renewal of ${item} refused: ${renewed.outcome.kind}`);
        expect(now).toMatchObject({ commit: renewed.lease.commit });
        expect((await store.renew(renewed.lease)).won).toBe(true);
      }
    }
    expect(wins.release + wins.renewal).toBe(ROUNDS);
    // About 8 s alone on 2 cores, 17 s beside other work: a deadline, not a timing.
  }, 120_000);
});
