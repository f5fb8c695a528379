/**
 * The board's section of every host's claims (`"claims": "git"`), through the board's server
 * over real HTTP, from the same data `engine status` shows (status/hosts-claims.ts): the claim
 * refs last fetched into the clone and when, with real git, a bare remote and clones as hosts.
 * In local mode the board has no such section: its answer is what it always was.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { projectActionContext } from '../../src/actions/action-context.js';
import { startBoardServer, type BoardServer } from '../../src/board/board-server.js';
import { fileBoardSource, type BoardSource } from '../../src/board/board-source.js';
import type { Board } from '../../src/board/board-view.js';
import { fetchClaimsSeen } from '../../src/claims/claims-view.js';
import { parseDispatchTable } from '../../src/dispatch/dispatch-table.js';
import { hostsRemoteOf, judgeOptionsOf, loadSettings } from '../../src/settings/load-settings.js';
import { collectStatus } from '../../src/status/collect-status.js';
import { claimFrom, sharedRemote, type SharedRemote } from '../claims/git-remote.js';
import { TEST_TAGS_MD } from '../helpers/daemon-harness.js';

let remote: SharedRemote;
let human: string;
let source: BoardSource | undefined;
let server: BoardServer | undefined;

function claimOn(host: string, item: string): Promise<void> {
  return claimFrom(remote, { host, instance: `inst-${host}`, boot: `boot-${host}` }, item);
}

/** The board's answer to `/api/board`, as the page asks for it. */
async function board(): Promise<Board> {
  const { settings } = await loadSettings(human, {}, process.env);
  const sessions = join(human, 'sessions');
  source = await fileBoardSource({
    root: human,
    paths: [sessions],
    watcher: 'parcel',
    onError: () => undefined,
    collect: () =>
      collectStatus(human, [sessions], parseDispatchTable(TEST_TAGS_MD, 'TAGS.md'), {
        options: judgeOptionsOf(settings),
        hostsRemote: hostsRemoteOf(settings),
      }),
  });
  server = await startBoardServer({
    root: human,
    source,
    host: '127.0.0.1',
    port: 0,
    readOnly: true,
    tail: async () => null,
    actions: await projectActionContext(human, process.env, {
      log: () => undefined,
      graceMs: 1000,
    }),
    log: () => undefined,
  });
  const token = new URL(server.url).hash.replace('#token=', '');
  const res = await fetch(`http://127.0.0.1:${server.port}/api/board`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Board;
}

beforeEach(() => {
  remote = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD });
  human = remote.host('human');
  mkdirSync(join(human, 'sessions'));
});
afterEach(async () => {
  await server?.close();
  await source?.close();
  server = undefined;
  source = undefined;
  remote.cleanup();
});

const engineJson = (keys: object) =>
  writeFileSync(join(human, 'directives', 'engine.json'), JSON.stringify(keys));

it("lists every host's claims as last fetched: host, item, file, noun, attempt, renewal age by the record's clock, and the fetch time", async () => {
  engineJson({ claims: 'git' });
  await claimOn('build-box', 'fix-a');
  await claimOn('laptop', 'fix-b');
  const fetched = new Date(Date.now() - 3 * 60_000);
  await fetchClaimsSeen({ repo: human, remote: 'origin' }, fetched);
  // The remote gone: the board shows what was fetched, with no network on its path.
  remote.git(human, 'remote', 'set-url', 'origin', join(remote.dir, 'gone.git'));
  const { hosts } = await board();
  expect(hosts?.title).toBe('Claims of every host on remote "origin" (2)');
  expect(hosts?.fetched).toBe(`fetched 3 min ago (${fetched.toISOString()})`);
  expect(hosts?.error).toBeNull();
  expect(hosts?.claims.map((c) => [c.host, c.item, c.file, c.noun, c.state, c.attempt])).toEqual([
    ['build-box', 'fix-a', 'sessions/fix-a.md', 'fix', 'held', '1'],
    ['laptop', 'fix-b', 'sessions/fix-b.md', 'fix', 'held', '1'],
  ]);
  expect(hosts?.claims[0]?.lease).toBe('1 min');
  expect(hosts?.claims[0]?.renewed).toMatch(/^(just now|.+ ago) by the record's clock$/);
});

it('says when no claims were fetched yet', async () => {
  engineJson({ claims: 'git' });
  const { hosts } = await board();
  expect(hosts).toEqual({
    title: 'Claims of every host on remote "origin"',
    fetched: 'fetch time unknown',
    error: 'none fetched yet (a daemon, or engine claims list, fetches them)',
    claims: [],
  });
});

it('has no hosts section in local mode, whatever claim refs the clone holds', async () => {
  engineJson({});
  await claimOn('build-box', 'fix-a');
  await fetchClaimsSeen({ repo: human, remote: 'origin' }, new Date());
  const answer = await board();
  expect(Object.keys(answer)).not.toContain('hosts');
});
