/**
 * `engine status` with `"claims": "git"`: every host's claims, from the claim refs last fetched
 * into the clone and the time of that fetch, with no network on status's path; nothing new in
 * local mode.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchClaimsSeen } from '../../src/claims/claims-view.js';
import type { Holder } from '../../src/claims/lease.js';
import { statusLines } from '../../src/cli/status-lines.js';
import type { DispatchTable } from '../../src/dispatch/dispatch-table.js';
import { hostsRemoteOf, loadSettings } from '../../src/settings/load-settings.js';
import { collectStatus } from '../../src/status/collect-status.js';
import { runCli } from '../helpers/run-cli.js';
import { claimFrom, sharedRemote, type SharedRemote } from '../claims/git-remote.js';

const buildBox: Holder = { host: 'build-box', instance: 'inst-b', boot: 'boot-b' };
const TABLE: DispatchTable = new Map([
  ['fix', { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true }],
]);
const OPTIONS = { claimGraceMs: 60_000, staleAfterMs: 45 * 60_000 };

let remote: SharedRemote;
let human: string;

function claimOn(host: string, item: string): Promise<void> {
  return claimFrom(remote, { ...buildBox, host }, item);
}

/** A status as `engine status` collects it: the hosts' remote from the clone's settings. */
async function status(now = new Date(), root = human) {
  const { settings } = await loadSettings(root, {}, {});
  const hostsRemote = hostsRemoteOf(settings);
  return collectStatus(root, [join(root, 'sessions')], TABLE, {
    now,
    options: OPTIONS,
    hostsRemote,
  });
}

function engineJson(keys: object): void {
  writeFileSync(join(human, 'directives', 'engine.json'), JSON.stringify(keys));
}

beforeEach(() => {
  remote = sharedRemote({ 'directives/engine.json': '{}\n' });
  human = remote.host('human');
  mkdirSync(join(human, 'sessions'));
});
afterEach(() => remote.cleanup());

describe("engine status: every host's claims", () => {
  it('lists nothing new in local mode: the report has no hosts key', async () => {
    await claimOn('build-box', 'fix-a');
    await fetchClaimsSeen({ repo: human, remote: 'origin' }, new Date());
    const report = await status();
    expect(Object.keys(report)).not.toContain('hosts');
    expect(
      statusLines(report, { path: 'TAGS.md', shipped: false }, new Date()).join('\n'),
    ).not.toContain('Claims of every host');
  });

  it('says when none were fetched yet', async () => {
    engineJson({ claims: 'git' });
    const report = await status();
    expect(report.hosts).toEqual({
      remote: 'origin',
      fetchedAt: null,
      claims: [],
      error: 'none fetched yet (a daemon, or engine claims list, fetches them)',
    });
  });

  it('shows the claims last fetched and when, without fetching: the remote may be gone', async () => {
    engineJson({ claims: 'git' });
    await claimOn('build-box', 'fix-a');
    await claimOn('laptop', 'fix-b');
    const fetched = new Date(Date.now() - 3 * 60_000);
    await fetchClaimsSeen({ repo: human, remote: 'origin' }, fetched);
    // Claimed after the fetch, and the remote out of reach: status shows what was fetched.
    await claimOn('laptop', 'fix-c');
    remote.git(human, 'remote', 'set-url', 'origin', join(remote.dir, 'gone.git'));
    const now = new Date();
    const report = await status(now);
    expect(report.hosts?.fetchedAt).toBe(fetched.toISOString());
    expect(report.hosts?.claims.map((c) => [c.item, c.state, c.holder?.host])).toEqual([
      ['fix-a', 'held', 'build-box'],
      ['fix-b', 'held', 'laptop'],
    ]);
    const text = statusLines(report, { path: 'TAGS.md', shipped: false }, now).join('\n');
    expect(text).toContain('Claims of every host on remote "origin" (2, fetched 3 min ago):');
    expect(text).toContain('  fix-b  sessions/fix-b.md  #fix\n    held, attempt 1, by laptop');
    expect(text.indexOf('Claims of every host')).toBeGreaterThan(text.indexOf('Stale ('));
    expect(text.indexOf('Claims of every host')).toBeLessThan(text.indexOf('Done in the last'));
  });

  it('reads claimsRemote, and says why it cannot show claims outside a clone', async () => {
    engineJson({ claims: 'git', claimsRemote: 'shared' });
    remote.git(human, 'remote', 'add', 'shared', remote.bare);
    await claimOn('build-box', 'fix-a');
    await fetchClaimsSeen({ repo: human, remote: 'shared' }, new Date());
    expect((await status()).hosts?.claims.map((c) => c.item)).toEqual(['fix-a']);
    const outside = join(remote.dir, 'outside');
    mkdirSync(join(outside, 'directives'), { recursive: true });
    writeFileSync(join(outside, 'directives', 'engine.json'), '{"claims":"git"}');
    const report = await status(new Date(), outside);
    expect(report.hosts?.error).toMatch(/not a git repository/);
  });

  it('engine status shows them, with the mode and remote from engine.json or the environment', async () => {
    await claimOn('build-box', 'fix-a');
    await fetchClaimsSeen({ repo: human, remote: 'origin' }, new Date());
    const env = { ...process.env, ENGINE_ASK_DAEMON: '0' };
    const local = await runCli(['status'], { cwd: human, env });
    expect(local.stdout).not.toContain('Claims of every host');
    const byEnv = await runCli(['status'], { cwd: human, env: { ...env, ENGINE_CLAIMS: 'git' } });
    expect(byEnv.stderr).toBe('');
    expect(byEnv.stdout).toMatch(
      /Claims of every host on remote "origin" \(1, fetched (just now|\d+ s ago)\):/,
    );
    // Not "engine run starts one": daemons on other hosts dispatch (found by a walk).
    expect(byEnv.stdout).toMatch(
      /daemons\s+on\s+other\s+hosts\s+dispatch\s+from\s+the\s+shared\s+branch/,
    );
    expect(local.stdout).toMatch(
      /so\s+nothing\s+is\s+dispatched\s+\(engine\s+run\s+starts\s+one\)/,
    );
    engineJson({ claims: 'git' });
    const byFile = await runCli(['status', '--json'], { cwd: human, env });
    expect(byFile.code).toBe(0);
    const report = JSON.parse(byFile.stdout) as { hosts: { claims: { item: string }[] } };
    expect(report.hosts.claims.map((c) => c.item)).toEqual(['fix-a']);
  });

  it("shows a claim another host's lease runs as running there, not stale, and one whose lease ran out as stale", async () => {
    engineJson({ claims: 'git' });
    await claimOn('build-box', 'fix-a');
    await fetchClaimsSeen({ repo: human, remote: 'origin' }, new Date());
    // The human's clone shows the claim (pulled); its session record is build-box's, not here.
    const file = join(human, 'sessions', 'fix-a.md');
    writeFileSync(file, '# A\n**Tags**: #claimed-fix\n**Session**: sessions/s-1\n');
    const claimedAt = new Date(Date.now() - 5 * 60_000);
    utimesSync(file, claimedAt, claimedAt);
    const report = await status();
    expect(report.stale).toEqual([]);
    expect(report.running).toHaveLength(1);
    expect(report.running[0]).toMatchObject({ alive: true, held: 'build-box' });
    expect(report.running[0]!.liveness).toMatch(
      /^runs on another host: held by build-box \(attempt 1/,
    );
    // Once its lease ran out by the claims last fetched, it is stale, and says why.
    const later = await status(new Date(Date.now() + 10 * 60_000));
    expect(later.running).toEqual([]);
    expect(later.stale[0]!.liveness).toMatch(
      /no session record .*; its lease, held by build-box .* ran out$/,
    );
  });
});
