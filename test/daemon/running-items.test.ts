/**
 * The other items running now, for each agent's prompt (issue 23, "Awareness"): this daemon's
 * running items, and with git claims every other host's held claims from the claim refs last
 * fetched into the clone (no fetch on the launch's path), with real git and a bare remote.
 */
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fetchClaimsSeen } from '../../src/claims/claims-view.js';
import { DaemonShared } from '../../src/daemon/daemon-shared.js';
import type { PlannedItem } from '../../src/daemon/request-snapshot.js';
import { otherRunningItems } from '../../src/daemon/running-items.js';
import { claimFrom, sharedRemote, type SharedRemote } from '../claims/git-remote.js';
import { inProcessContext } from '../helpers/in-process-context.js';

let remote: SharedRemote;
let clone: string;

function claimOn(host: string, item: string, branch?: string): Promise<void> {
  return claimFrom(remote, { host, instance: `inst-${host}`, boot: `boot-${host}` }, item, branch);
}

/** A daemon's shared state over the clone, one item running here, and the item it launches. */
function daemonOver(claims: 'local' | 'git') {
  const ctx = inProcessContext(clone, { options: { claims, claimsRemote: 'origin' } });
  const shared = new DaemonShared(ctx);
  shared.table.move(
    join(clone, 'sessions', 'here.md'),
    'fix',
    { kind: 'running', session: 's' },
    'test',
  );
  const launching = { file: join(clone, 'sessions', 'fix-c.md'), noun: 'fix' } as PlannedItem;
  return { shared, launching };
}

beforeEach(async () => {
  remote = sharedRemote({ 'directives/engine.json': '{}\n' });
  clone = remote.host('this-host');
  mkdirSync(join(clone, 'sessions'));
  await claimOn('build-box', 'fix-a', 'engine/fix/fix-a-0123456789ab');
  await claimOn('laptop', 'fix-b');
  // The item being launched: its own claim is not another item.
  await claimOn(hostname(), 'fix-c');
});
afterEach(() => remote.cleanup());

it("git: this daemon's running items and every other host's held claims as last fetched, with the branch a claim names", async () => {
  const { shared, launching } = daemonOver('git');
  const here = { file: 'sessions/here.md', noun: 'fix', host: hostname(), branch: null };
  // Nothing fetched yet: only this daemon's own.
  expect(await otherRunningItems(shared, launching)).toEqual([here]);

  await fetchClaimsSeen({ repo: clone, remote: 'origin' }, new Date());
  expect(await otherRunningItems(shared, launching)).toEqual([
    here,
    {
      file: 'sessions/fix-a.md',
      noun: 'fix',
      host: 'build-box',
      branch: 'engine/fix/fix-a-0123456789ab',
    },
    { file: 'sessions/fix-b.md', noun: 'fix', host: 'laptop', branch: null },
  ]);
});

it("local: this daemon's running items only, whatever claim refs the clone holds", async () => {
  await fetchClaimsSeen({ repo: clone, remote: 'origin' }, new Date());
  const { shared, launching } = daemonOver('local');
  expect(await otherRunningItems(shared, launching)).toEqual([
    { file: 'sessions/here.md', noun: 'fix', host: hostname(), branch: null },
  ]);
});
