import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fileAt, INDEX } from '../../src/claims/shared-branch.js';
import { SharedCheckout } from '../../src/claims/shared-checkout.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const REQUEST = 'sessions/fix-login.md';
let remote: SharedRemote;

beforeEach(() => {
  remote = sharedRemote({ [REQUEST]: '# Fix login\n\n**Tags**: #needs-fix\n' });
});
afterEach(() => remote.cleanup());

it('follows the shared branch in a checkout of its own, leaving the human clone alone', async () => {
  const host = remote.host('h1');
  writeFileSync(join(host, REQUEST), '# Fix login\n\n**Tags**: #needs-fix\n\nUnsaved work.\n');
  const head = remote.git(host, 'rev-parse', 'HEAD');
  const checkout = new SharedCheckout(
    { repo: host, remote: 'origin', branch: 'main' },
    join(remote.dir, 'h1-shared'),
  );
  const first = await checkout.sync();
  expect(first).toMatchObject({ changed: true });
  expect(await checkout.sync()).toMatchObject({ changed: false });
  // A human approves from another clone and pushes.
  const human = remote.host('human');
  writeFileSync(join(human, REQUEST), '# Fix login\n\n**Tags**: #delegated-fix\n');
  remote.git(human, 'commit', '-qam', 'approve');
  remote.git(human, 'push', '-q', 'origin', 'main');
  expect(await checkout.sync()).toMatchObject({ changed: true });
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toContain('#delegated-fix');
  expect(readFileSync(join(host, REQUEST), 'utf8')).toContain('Unsaved work.');
  expect(remote.git(host, 'rev-parse', 'HEAD')).toBe(head);
  expect(remote.git(host, 'status', '--porcelain')).toBe(` M ${REQUEST}\n`);
  await checkout.remove();
  expect(remote.git(host, 'worktree', 'list')).not.toContain('h1-shared');
});

it('says the remote is unreachable, and keeps the checkout it has', async () => {
  const host = remote.host('h1');
  const checkout = new SharedCheckout(
    { repo: host, remote: 'origin', branch: 'main' },
    join(remote.dir, 'h1-shared'),
  );
  await checkout.sync();
  remote.git(host, 'remote', 'set-url', 'origin', join(remote.dir, 'gone.git'));
  expect(await checkout.sync()).toEqual({ unreachable: true, reset: [] });
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toContain('#needs-fix');
  // A write no lease is behind is reset even while the remote is out of reach.
  const copy = join(checkout.dir, REQUEST);
  writeFileSync(copy, readFileSync(copy, 'utf8').replace('#needs-fix', '#done-fix'));
  expect(await checkout.sync()).toEqual({ unreachable: true, reset: [REQUEST] });
  expect(readFileSync(copy, 'utf8')).toContain('#needs-fix');
});

it('refuses a directory that is not its checkout, and resets a change no lease is behind', async () => {
  const host = remote.host('h1');
  remote.git(host, 'checkout', '-q', '-b', 'feature');
  // A directory inside the human's clone, with no .git of its own: git would find the clone's.
  const stray = join(host, 'stray');
  mkdirSync(stray);
  const where = { repo: host, remote: 'origin', branch: 'main' };
  await expect(new SharedCheckout(where, stray).sync()).rejects.toThrow(/not engine's checkout/);
  expect(remote.git(host, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/feature');
  const checkout = new SharedCheckout(where, join(remote.dir, 'h1-shared'));
  await checkout.sync();
  writeFileSync(join(checkout.dir, REQUEST), 'changed\n');
  const human = remote.host('human');
  writeFileSync(join(human, 'README.md'), 'new\n');
  remote.git(human, 'commit', '-qam', 'readme');
  remote.git(human, 'push', '-q', 'origin', 'main');
  expect(await checkout.sync()).toMatchObject({ changed: true, reset: [REQUEST] });
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toContain('#needs-fix');
  // Reset at a sync with no new tip too: the queue is read as the branch has it.
  writeFileSync(join(checkout.dir, REQUEST), 'late\n');
  expect(await checkout.sync()).toMatchObject({ changed: false, reset: [REQUEST] });
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toContain('#needs-fix');
});

it('carries an agent’s mark of a held request over a move, and resets any other change', async () => {
  const host = remote.host('h1');
  const where = { repo: host, remote: 'origin', branch: 'main' };
  const checkout = new SharedCheckout(where, join(remote.dir, 'h1-shared'));
  await checkout.sync();
  const marked = '# Fix login\n\n**Tags**: #done-fix\n';
  writeFileSync(join(checkout.dir, REQUEST), marked);
  const human = remote.host('human');
  writeFileSync(join(human, 'README.md'), 'new\n');
  remote.git(human, 'commit', '-qam', 'readme');
  remote.git(human, 'push', '-q', 'origin', 'main');
  expect(await checkout.sync(new Set([REQUEST]))).toMatchObject({ changed: true });
  expect(readFileSync(join(checkout.dir, 'README.md'), 'utf8')).toBe('new\n');
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe(marked);
  writeFileSync(join(checkout.dir, 'README.md'), 'mine\n');
  writeFileSync(join(human, 'README.md'), 'newer\n');
  remote.git(human, 'commit', '-qam', 'readme again');
  remote.git(human, 'push', '-q', 'origin', 'main');
  expect(await checkout.sync(new Set([REQUEST]))).toMatchObject({ reset: ['README.md'] });
  expect(readFileSync(join(checkout.dir, 'README.md'), 'utf8')).toBe('newer\n');
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe(marked);
});

it('restores a file by its literal name: a `*` in it names no other file', async () => {
  const host = remote.host('h1');
  const human = remote.host('human');
  writeFileSync(join(human, 'sessions/*.md'), 'star\n');
  remote.git(human, 'add', '.');
  remote.git(human, 'commit', '-qm', 'star');
  remote.git(human, 'push', '-q', 'origin', 'main');
  const where = { repo: host, remote: 'origin', branch: 'main' };
  const checkout = new SharedCheckout(where, join(remote.dir, 'h1-shared'));
  await checkout.sync();
  writeFileSync(join(checkout.dir, 'sessions/*.md'), 'changed\n');
  writeFileSync(join(checkout.dir, REQUEST), 'held\n');
  await checkout.restore(['sessions/*.md']);
  expect(readFileSync(join(checkout.dir, 'sessions/*.md'), 'utf8')).toBe('star\n');
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe('held\n');
  // A name the tip no longer has is no pattern over the names it has.
  await expect(checkout.restore(['sessions/*-login.md'])).rejects.toThrow();
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe('held\n');
});

it('makes its checkout again after its directory was deleted by hand', async () => {
  const host = remote.host('h1');
  const checkout = new SharedCheckout(
    { repo: host, remote: 'origin', branch: 'main' },
    join(remote.dir, 'h1-shared'),
  );
  await checkout.sync();
  rmSync(checkout.dir, { recursive: true, force: true });
  // git still lists it as a worktree: adding it again must not be refused.
  expect(await checkout.sync()).toMatchObject({ changed: true });
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toContain('#needs-fix');
});

it('moves past a held copy its agent changed when the tip changed it too, keeping the copy and the text it was edited from', async () => {
  const host = remote.host('h1');
  const where = { repo: host, remote: 'origin', branch: 'main' };
  const checkout = new SharedCheckout(where, join(remote.dir, 'h1-shared'));
  await checkout.sync();
  const base = readFileSync(join(checkout.dir, REQUEST), 'utf8');
  const agents = `${base}\n## Response\nFixed.\n`;
  writeFileSync(join(checkout.dir, REQUEST), agents);
  // A human edits the claimed request and adds another; git refuses a plain move over the copy.
  const human = remote.host('human');
  writeFileSync(join(human, REQUEST), `A human's note.\n${base}`);
  writeFileSync(join(human, 'sessions/other.md'), '# Other\n\n**Tags**: #delegated-fix\n');
  remote.git(human, 'add', '.');
  remote.git(human, 'commit', '-qm', 'human edits');
  remote.git(human, 'push', '-q', 'origin', 'main');
  const tip = remote.git(human, 'rev-parse', 'HEAD').trim();
  expect(await checkout.sync(new Set([REQUEST]))).toEqual({
    tip,
    changed: true,
    reset: [],
    kept: [REQUEST],
  });
  expect(remote.git(checkout.dir, 'rev-parse', 'HEAD').trim()).toBe(tip);
  expect(readFileSync(join(checkout.dir, 'sessions/other.md'), 'utf8')).toContain('# Other');
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe(agents);
  expect(await fileAt(checkout.dir, INDEX, REQUEST)).toMatchObject({ text: base });
  // Another move the request is not part of carries the copy and its index entry over.
  writeFileSync(join(human, 'README.md'), 'new\n');
  remote.git(human, 'commit', '-qam', 'readme');
  remote.git(human, 'push', '-q', 'origin', 'main');
  expect(await checkout.sync(new Set([REQUEST]))).toMatchObject({ reset: [], kept: [] });
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe(agents);
  expect(await fileAt(checkout.dir, INDEX, REQUEST)).toMatchObject({ text: base });
  // Given back, the copy and its index entry are the tip's again.
  await checkout.restore([REQUEST]);
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe(`A human's note.\n${base}`);
  expect(remote.git(checkout.dir, 'status', '--porcelain')).toBe('');
});

it('keeps a held copy the tip deleted or renamed where its agent works on it, and resets it once no longer held', async () => {
  const host = remote.host('h1');
  const where = { repo: host, remote: 'origin', branch: 'main' };
  const checkout = new SharedCheckout(where, join(remote.dir, 'h1-shared'));
  await checkout.sync();
  const agents = 'the agent was here\n';
  writeFileSync(join(checkout.dir, REQUEST), agents);
  const human = remote.host('human');
  remote.git(human, 'mv', REQUEST, 'sessions/renamed.md');
  remote.git(human, 'commit', '-qm', 'rename');
  remote.git(human, 'push', '-q', 'origin', 'main');
  expect(await checkout.sync(new Set([REQUEST]))).toMatchObject({ reset: [], kept: [REQUEST] });
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe(agents);
  expect(readFileSync(join(checkout.dir, 'sessions/renamed.md'), 'utf8')).toContain('#needs-fix');
  expect(await checkout.sync()).toMatchObject({ reset: [REQUEST] });
  expect(existsSync(join(checkout.dir, REQUEST))).toBe(false);
  expect(remote.git(checkout.dir, 'status', '--porcelain')).toBe('');
});

it('moving path by path, leaves every held copy the tip changed as it is, changed or not (git does not check it there)', async () => {
  const other = 'sessions/other.md';
  const human = remote.host('human');
  writeFileSync(join(human, other), '# Other\n');
  remote.git(human, 'add', '.');
  remote.git(human, 'commit', '-qm', 'other');
  remote.git(human, 'push', '-q', 'origin', 'main');
  const where = { repo: remote.host('h1'), remote: 'origin', branch: 'main' };
  const checkout = new SharedCheckout(where, join(remote.dir, 'h1-shared'));
  await checkout.sync();
  const agents = 'the agent was here\n';
  writeFileSync(join(checkout.dir, REQUEST), agents);
  // The human edits both held requests; the second one's agent has not written yet.
  writeFileSync(join(human, REQUEST), 'human 1\n');
  writeFileSync(join(human, other), 'human 2\n');
  remote.git(human, 'commit', '-qam', 'both');
  remote.git(human, 'push', '-q', 'origin', 'main');
  const synced = await checkout.sync(new Set([REQUEST, other]));
  expect(synced).toMatchObject({ reset: [] });
  expect('kept' in synced ? [...synced.kept].sort() : []).toEqual([other, REQUEST].sort());
  expect(readFileSync(join(checkout.dir, REQUEST), 'utf8')).toBe(agents);
  expect(readFileSync(join(checkout.dir, other), 'utf8')).toBe('# Other\n');
  expect(await fileAt(checkout.dir, INDEX, other)).toMatchObject({ text: '# Other\n' });
});
