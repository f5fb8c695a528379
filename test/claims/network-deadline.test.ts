/**
 * A remote that accepts connections and never answers: every network git call of the claim refs
 * (fetch, push, ls-remote) ends at its deadline as unreachable, never hangs.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fetchClaim, fetchClaims, swapClaimRef } from '../../src/claims/claim-refs.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';
import { silentServer, type SilentServer } from './silent-server.js';

let remote: SharedRemote;
let server: SilentServer;
let clone: string;

beforeEach(async () => {
  remote = sharedRemote();
  clone = remote.host('host');
  server = await silentServer();
  remote.git(clone, 'remote', 'set-url', 'origin', server.url);
});
afterEach(async () => {
  await server.stop();
  remote.cleanup();
});

it('fetch, push and ls-remote end at the deadline as unreachable', async () => {
  const where = { repo: clone, remote: 'origin', deadlineMs: 1000 };
  const started = Date.now();
  expect(await fetchClaims(where)).toBeNull();
  expect(await fetchClaim(where, 'fix-a')).toBeNull();
  const head = remote.git(clone, 'rev-parse', 'HEAD').trim();
  expect(await swapClaimRef(where, 'fix-a', null, head)).toEqual({
    kind: 'unreachable',
    message: expect.stringContaining('no answer within 1 s') as unknown,
  });
  expect(Date.now() - started).toBeLessThan(15_000);
});
