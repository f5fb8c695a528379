/**
 * GitClaims (src/daemon/git-claims.ts) in-process over a real bare remote: a claim is written
 * only over the text its item was read from, as the local store's compare-and-swap; a checkout
 * that cannot be moved is said as such, never blamed on the remote.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { lastSeenClaims } from '../../src/claims/claims-view.js';
import { GitClaims } from '../../src/daemon/git-claims.js';
import { worktreePlace } from '../../src/worktrees/worktree.js';
import type { PlannedItem } from '../../src/daemon/request-snapshot.js';
import { TEST_TAGS_MD } from '../helpers/daemon-harness.js';
import { inProcessContext } from '../helpers/in-process-context.js';
import { fakeProbe } from '../process/fake-probe.js';
import { waitFor } from '../helpers/wait-for.js';
import { preReceive, sharedRemote, type SharedRemote } from './git-remote.js';

const REQUEST = 'sessions/item.md';
const TEXT = '# Item\n**Tags**: #delegated-fix\n\nBody.\n';
let remote: SharedRemote | null = null;
let claims: GitClaims | null = null;
const stateHome = process.env.XDG_STATE_HOME;

afterEach(async () => {
  await claims?.close();
  claims = null;
  remote?.cleanup();
  remote = null;
  if (stateHome === undefined) delete process.env.XDG_STATE_HOME;
  else process.env.XDG_STATE_HOME = stateHome;
});

function humanPush(shared: SharedRemote, change: (text: string) => string): void {
  const human = shared.host(`human-${Math.random().toString(36).slice(2)}`);
  const file = join(human, REQUEST);
  writeFileSync(file, change(readFileSync(file, 'utf8')));
  shared.git(human, 'commit', '-qam', 'human edit');
  shared.git(human, 'push', '-q', 'origin', 'main');
}

/** The item as the daemon would have read it: only what the claim looks at. */
const itemOf = (file: string, text: string) =>
  ({ file, noun: 'fix', snapshot: { text } }) as unknown as PlannedItem;

/** GitClaims over a clone of `shared`, fetching every `fetchMs`. */
async function openOn(
  shared: SharedRemote,
  log: (message: string) => void,
  fetchMs = 600_000,
  leaseMs = 30_000,
  root = shared.host('a'),
) {
  process.env.XDG_STATE_HOME = join(shared.dir, 'state');
  const { options } = inProcessContext(root, {
    options: {
      paths: [join(root, 'sessions')],
      claims: 'git',
      claimsRemote: 'origin',
      claimsBranch: 'main',
      claimsFetchMs: fetchMs,
      claimsLeaseMs: leaseMs,
    },
  });
  const probe = fakeProbe({ host: 'a', bootId: 'b' });
  return GitClaims.open(options, (_level, message) => log(message), probe);
}

it('gives the claim ref back and reads again when the request changed on the branch since it was read', async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  claims = await openOn(shared, () => undefined);
  const [sessions] = await claims.paths();
  const file = join(sessions!, 'item.md');
  // A human adds a line to the body after the daemon read the request.
  humanPush(shared, (text) => `${text}A human's line.\n`);
  expect(await claims.claim(itemOf(file, TEXT), 'sessions/s-1')).toEqual({
    kind: 'changed',
    why: 'since-read',
  });
  const branchText = shared.git(shared.bare, 'show', `main:${REQUEST}`);
  expect(branchText).toContain('#delegated-fix');
  const refs = shared.git(
    shared.bare,
    'for-each-ref',
    '--format=%(contents:subject)',
    'refs/engine/claims/',
  );
  expect(refs).toMatch(/: released, attempt 1, by a$/m);
  // Read again, with the human's line: claimed.
  const again = await claims.claim(itemOf(file, branchText), 'sessions/s-2');
  expect(again).toEqual({ kind: 'claimed' });
  expect(shared.git(shared.bare, 'show', `main:${REQUEST}`)).toContain('#claimed-fix');
});

it('says a checkout that cannot be moved as such, and never blames the remote for it', async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const lines: string[] = [];
  claims = await openOn(shared, (message) => lines.push(message), 100);
  const [sessions] = await claims.paths();
  // The checkout is replaced by a directory that is not a worktree of the repository.
  const checkout = dirname(sessions!);
  rmSync(checkout, { recursive: true, force: true });
  mkdirSync(join(checkout, 'sessions'), { recursive: true });
  await waitFor(() => lines.some((l) => /the checkout could not be moved/.test(l)), {
    timeoutMs: 20_000,
    message: () => `a checkout fault said; log:\n${lines.join('\n')}`,
  });
  // Taken away again, the checkout is made anew by a later fetch: the faulty one ended first.
  rmSync(checkout, { recursive: true, force: true });
  await waitFor(() => existsSync(join(checkout, '.git')), {
    timeoutMs: 20_000,
    message: 'the checkout made again',
  });
  expect(lines.filter((l) => /the checkout could not be moved/.test(l))).toHaveLength(1);
  expect(lines.filter((l) => /cannot be reached/.test(l))).toEqual([]);
});

/** Claims the request, then the agent writes its copy in the checkout: a Response, and done. */
async function claimAndFinish(
  shared: SharedRemote,
  lines: string[],
  agentBody: string,
  fetchMs?: number,
) {
  claims = await openOn(shared, (message) => lines.push(message), fetchMs);
  const [sessions] = await claims.paths();
  const file = join(sessions!, 'item.md');
  expect(await claims.claim(itemOf(file, TEXT), 'sessions/s-1')).toEqual({ kind: 'claimed' });
  const copy = readFileSync(file, 'utf8').replace('#claimed-fix', '#done-fix');
  writeFileSync(file, copy.replace('Body.\n', agentBody));
  return file;
}

it("publishes the agent's edits of its request with the done, merged with a human's since", async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const lines: string[] = [];
  const file = await claimAndFinish(shared, lines, 'Body.\n\n## Response\nFixed it.\n');
  humanPush(shared, (text) => text.replace('# Item\n', '# Item\n\nA human note on top.\n'));
  expect(await claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' })).toEqual({
    counted: true,
  });
  const branchText = shared.git(shared.bare, 'show', `main:${REQUEST}`);
  expect(branchText).toContain('#done-fix');
  expect(branchText).toContain('## Response\nFixed it.\n');
  expect(branchText).toContain('A human note on top.\n');
  expect(lines.filter((l) => /clashed/.test(l))).toEqual([]);
});

it("keeps the agent's copy and publishes only the done when its edits clash with a human's", async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const lines: string[] = [];
  const file = await claimAndFinish(shared, lines, 'The agent rewrote the body.\n');
  humanPush(shared, (text) => text.replace('Body.\n', 'The human rewrote the body.\n'));
  expect(await claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' })).toEqual({
    counted: true,
  });
  const branchText = shared.git(shared.bare, 'show', `main:${REQUEST}`);
  expect(branchText).toContain('#done-fix');
  expect(branchText).toContain('The human rewrote the body.\n');
  expect(branchText).not.toContain('<<<<<<<');
  const said = lines.find((l) => /clashed/.test(l));
  const kept = /its copy is kept at (\S+)$/.exec(said ?? '')?.[1];
  expect(kept, lines.join('\n')).toBeDefined();
  expect(readFileSync(kept!, 'utf8')).toContain('The agent rewrote the body.\n');
});

it('dates each fetch of the claims, for engine status and the board', async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const before = Date.now();
  claims = await openOn(shared, () => undefined);
  const seen = await lastSeenClaims({ repo: join(shared.dir, 'a'), remote: 'origin' });
  expect(Date.parse(seen?.fetchedAt ?? '')).toBeGreaterThanOrEqual(before - 1_000);
});

it("continues the agent's branch an earlier run left on the remote when it claims", async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  claims = await openOn(shared, () => undefined);
  const [sessions] = await claims.paths();
  const file = join(sessions!, 'item.md');
  // An earlier run, on another host, left its work on the agent's branch.
  const { branch } = worktreePlace(claims.agentRoot, 'fix', file);
  const other = shared.host('other');
  shared.git(other, 'checkout', '-q', '-b', branch);
  writeFileSync(join(other, 'work.txt'), 'earlier run\n');
  shared.git(other, 'add', '.');
  shared.git(other, 'commit', '-qm', 'earlier run');
  shared.git(other, 'push', '-q', 'origin', branch);
  expect(await claims.claim(itemOf(file, TEXT), 'sessions/s-1')).toEqual({ kind: 'claimed' });
  const here = shared.git(join(shared.dir, 'a'), 'rev-parse', `refs/heads/${branch}`).trim();
  expect(here).toBe(shared.git(other, 'rev-parse', 'HEAD').trim());
});

it('gives a done up at once when the daemon stops, rather than trying for a lease', async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const lines: string[] = [];
  const file = await claimAndFinish(shared, lines, 'Body.\n', 1_000);
  // The server refuses every push to the branch: the done is tried again and again.
  preReceive(
    shared,
    'while read old new ref; do [ "$ref" = refs/heads/main ] && exit 1; done\nexit 0',
  );
  const done = claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' });
  await waitFor(() => lines.some((l) => /could not publish the done/.test(l)), {
    timeoutMs: 20_000,
    message: () => `a refused done said; log:\n${lines.join('\n')}`,
  });
  const asked = Date.now();
  claims!.stopping();
  expect(await done).toMatchObject({ counted: false });
  // Its next try gives up: one fetch period (1 s here), not the 30 s lease of refusals.
  expect(Date.now() - asked).toBeLessThan(15_000);
});

it("merges the agent's copy from the text it was edited from: a human's line removed since stays removed", async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  claims = await openOn(shared, () => undefined, 300);
  const [sessions] = await claims.paths();
  const file = join(sessions!, 'item.md');
  expect(await claims.claim(itemOf(file, TEXT), 'sessions/s-1')).toEqual({ kind: 'claimed' });
  // A human adds a line; the checkout's copy shows it before the agent writes.
  humanPush(shared, (text) => text.replace('# Item\n', '# Item\nA line the human takes back.\n'));
  await waitFor(() => readFileSync(file, 'utf8').includes('takes back'), {
    timeoutMs: 20_000,
    message: 'the checkout moved to the human line',
  });
  const copy = readFileSync(file, 'utf8').replace('#claimed-fix', '#done-fix');
  writeFileSync(file, `${copy}\n## Response\nFixed it.\n`);
  humanPush(shared, (text) => text.replace('A line the human takes back.\n', ''));
  expect(await claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' })).toEqual({
    counted: true,
  });
  const branchText = shared.git(shared.bare, 'show', `main:${REQUEST}`);
  expect(branchText).toContain('## Response\nFixed it.\n');
  expect(branchText).not.toContain('takes back');
});

it("keeps the agent's copy when its done does not count (a human took the claim back)", async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const lines: string[] = [];
  const file = await claimAndFinish(shared, lines, 'Body.\n\n## Response\nFixed it.\n');
  humanPush(shared, (text) => text.replace('#claimed-fix', '#needs-fix'));
  const ended = await claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' });
  expect(ended).toMatchObject({ counted: false });
  expect(shared.git(shared.bare, 'show', `main:${REQUEST}`)).toContain('#needs-fix');
  const kept = /its copy is kept at (\S+)$/.exec(
    lines.find((l) => /did not count/.test(l)) ?? '',
  )?.[1];
  expect(kept, lines.join('\n')).toBeDefined();
  expect(readFileSync(kept!, 'utf8')).toContain('## Response\nFixed it.\n');
});

/** A claim of the request on a fresh remote, fetched every 300 ms, its agent not yet done. */
async function claimWorking(lines: string[], leaseMs?: number) {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  claims = await openOn(shared, (message) => lines.push(message), 300, leaseMs);
  const [sessions] = await claims.paths();
  const file = join(sessions!, 'item.md');
  expect(await claims.claim(itemOf(file, TEXT), 'sessions/s-1')).toEqual({ kind: 'claimed' });
  return { shared, sessions: sessions!, file };
}

it('gives the lease back once its session is followed no more, so that the item is claimed again on its next approval', async () => {
  const lines: string[] = [];
  const { shared, file } = await claimWorking(lines);
  // A human takes the claim back and approves the item again, while the lease is held.
  const again = TEXT.replace('Body.', 'Body, again.');
  humanPush(shared, () => again);
  await waitFor(() => readFileSync(file, 'utf8') === again, { message: () => lines.join('\n') });
  expect(await claims!.claim(itemOf(file, again), 'sessions/s-2')).toMatchObject({
    kind: 'elsewhere',
  });
  await claims!.followEnded('sessions/s-1');
  expect(lines.join('\n')).toMatch(/sessions\/s-1 is followed no more.*its lease is given back/);
  expect(await claims!.claim(itemOf(file, again), 'sessions/s-2')).toEqual({ kind: 'claimed' });
  expect(shared.git(shared.bare, 'show', `main:${REQUEST}`)).toContain('sessions/s-2');
});

it("shows a claim in the checkout before its agent starts, also when the move goes path by path past another agent's changed copy", async () => {
  const other = 'sessions/other.md';
  const shared = sharedRemote({
    'directives/TAGS.md': TEST_TAGS_MD,
    [REQUEST]: TEXT,
    [other]: TEXT,
  });
  remote = shared;
  const lines: string[] = [];
  claims = await openOn(shared, (message) => lines.push(message));
  const [sessions] = await claims.paths();
  const file = join(sessions!, 'item.md');
  expect(await claims.claim(itemOf(file, TEXT), 'sessions/s-1')).toEqual({ kind: 'claimed' });
  // Its agent writes its copy; a human edits the same request on the branch meanwhile.
  writeFileSync(file, `${readFileSync(file, 'utf8')}\n## Response\nWorking on it.\n`);
  humanPush(shared, (text) => `A human's note.\n${text}`);
  // The next claim's sync moves past both: path by path, the first agent's copy left alone.
  const next = join(sessions!, 'other.md');
  expect(await claims.claim(itemOf(next, TEXT), 'sessions/s-2')).toEqual({ kind: 'claimed' });
  expect(readFileSync(next, 'utf8'), lines.join('\n')).toContain('#claimed-fix');
  expect(readFileSync(file, 'utf8')).toContain('Working on it.');
});

it('follows the queue past a claimed request a human edited after its agent changed it, and merges both at the done', async () => {
  const lines: string[] = [];
  const { shared, sessions, file } = await claimWorking(lines);
  writeFileSync(file, `${readFileSync(file, 'utf8')}\n## Response\nWorking on it.\n`);
  // The human adds a note to the claimed request and approves another one.
  const human = shared.host('human');
  writeFileSync(
    join(human, REQUEST),
    `A human's note.\n${readFileSync(join(human, REQUEST), 'utf8')}`,
  );
  writeFileSync(join(human, 'sessions/other.md'), '# Other\n**Tags**: #delegated-fix\n');
  shared.git(human, 'add', '.');
  shared.git(human, 'commit', '-qm', 'human edits');
  shared.git(human, 'push', '-q', 'origin', 'main');
  await waitFor(() => existsSync(join(sessions!, 'other.md')), {
    timeoutMs: 20_000,
    message: () => `the queue followed past the claimed request; log:\n${lines.join('\n')}`,
  });
  expect(readFileSync(file, 'utf8'), lines.join('\n')).toContain('Working on it.');
  writeFileSync(file, readFileSync(file, 'utf8').replace('#claimed-fix', '#done-fix'));
  expect(await claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' })).toEqual({
    counted: true,
  });
  const branchText = shared.git(shared.bare, 'show', `main:${REQUEST}`);
  expect(branchText).toContain("A human's note.\n");
  expect(branchText).toContain('#done-fix');
  expect(branchText).toContain('## Response\nWorking on it.\n');
  expect(lines.filter((l) => /could not be moved|clashed/.test(l))).toEqual([]);
});

it("keeps the agent's copy when its lease moved on, before the checkout's copy is reset", async () => {
  const lines: string[] = [];
  const { shared, file } = await claimWorking(lines, 3_000);
  writeFileSync(file, `${readFileSync(file, 'utf8')}\n## Response\nHalf done.\n`);
  // A person releases the claim by force: the holder's next renewal finds its lease gone.
  const [ref] = shared
    .git(shared.bare, 'for-each-ref', '--format=%(refname)', 'refs/engine/claims/')
    .split('\n');
  shared.git(shared.bare, 'update-ref', '-d', ref!);
  await waitFor(() => lines.some((l) => /released it\): not counted/.test(l)), {
    timeoutMs: 20_000,
    message: () => `the lost lease's copy reset; log:\n${lines.join('\n')}`,
  });
  const said = lines.find((l) => /released it\): not counted/.test(l))!;
  const kept = /its copy is kept at (\S+),/.exec(said)?.[1];
  expect(kept, said).toBeDefined();
  expect(readFileSync(kept!, 'utf8')).toContain('## Response\nHalf done.\n');
  // Said as the copy is kept, before the reset.
  await waitFor(() => !readFileSync(file, 'utf8').includes('Half done.'), {
    timeoutMs: 20_000,
    message: "the checkout's copy reset",
  });
});

it('leaves the copy of a running agent alone when its daemon starts again, until the lease is adopted', async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const lines: string[] = [];
  const file = await claimAndFinish(shared, lines, 'Body.\n\n## Response\nFixed it.\n');
  const copy = readFileSync(file, 'utf8');
  await claims!.close();
  // The daemon starts again (same host, boot and checkout); its agent still runs.
  claims = await openOn(
    shared,
    (message) => lines.push(message),
    600_000,
    30_000,
    join(shared.dir, 'a'),
  );
  expect(readFileSync(file, 'utf8')).toBe(copy);
  expect(await claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' })).toEqual({
    counted: true,
  });
  expect(shared.git(shared.bare, 'show', `main:${REQUEST}`)).toContain('## Response\nFixed it.\n');
});

it("keeps the agent's copy where it works on it when a human renames the request meanwhile, and lands the done at the new name", async () => {
  const lines: string[] = [];
  const { shared, sessions, file } = await claimWorking(lines);
  writeFileSync(file, `${readFileSync(file, 'utf8')}\n## Response\nWorking on it.\n`);
  const human = shared.host('human');
  shared.git(human, 'mv', REQUEST, 'sessions/renamed.md');
  shared.git(human, 'commit', '-qm', 'rename');
  shared.git(human, 'push', '-q', 'origin', 'main');
  await waitFor(() => existsSync(join(sessions!, 'renamed.md')), {
    timeoutMs: 20_000,
    message: () => `the checkout moved past the rename; log:\n${lines.join('\n')}`,
  });
  // A later move the request is no part of: the copy stays where its agent works on it.
  writeFileSync(join(human, 'README.md'), 'later\n');
  shared.git(human, 'commit', '-qam', 'later');
  shared.git(human, 'push', '-q', 'origin', 'main');
  await waitFor(() => readFileSync(join(dirname(sessions!), 'README.md'), 'utf8') === 'later\n', {
    timeoutMs: 20_000,
    message: 'the checkout moved on',
  });
  expect(readFileSync(file, 'utf8')).toContain('Working on it.');
  writeFileSync(file, readFileSync(file, 'utf8').replace('#claimed-fix', '#done-fix'));
  expect(await claims!.publishDone({ file, noun: 'fix', session: 'sessions/s-1' })).toEqual({
    counted: true,
  });
  const branchText = shared.git(shared.bare, 'show', 'main:sessions/renamed.md');
  expect(branchText).toContain('#done-fix');
  expect(branchText).toContain('## Response\nWorking on it.\n');
  expect(lines.filter((l) => /could not be moved|reset/.test(l))).toEqual([]);
});

it('keeps a copy written in the checkout with no lease held (an agent it no longer knows of) before it resets it', async () => {
  const shared = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, [REQUEST]: TEXT });
  remote = shared;
  const lines: string[] = [];
  claims = await openOn(shared, (message) => lines.push(message), 300);
  const [sessions] = await claims.paths();
  const file = join(sessions!, 'item.md');
  writeFileSync(file, `${TEXT}\n## Response\nAn agent's work.\n`);
  await waitFor(() => lines.some((l) => /no lease held/.test(l)), {
    timeoutMs: 20_000,
    message: () => `the stray write reset; log:\n${lines.join('\n')}`,
  });
  const kept = /its copy is kept at (\S+),/.exec(lines.find((l) => /no lease held/.test(l))!)?.[1];
  expect(kept, lines.join('\n')).toMatch(/sessions_item\.md-reset-.*\.txt$/);
  expect(readFileSync(kept!, 'utf8')).toContain("An agent's work.");
  await waitFor(() => readFileSync(file, 'utf8') === TEXT, {
    timeoutMs: 20_000,
    message: "the checkout's copy reset",
  });
});
