import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { itemIdFrom, itemIdOf } from '../../src/claims/item-id.js';
import { isItemId } from '../../src/claims/lease.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const TEXT =
  '# Fix login\n\n**Tags**: #delegated-fix\n\nThe login form drops the session cookie.\n';
let remote: SharedRemote;
let clone: string;

beforeEach(() => {
  remote = sharedRemote({ 'sessions/fix-login.md': TEXT });
  clone = remote.host('h');
});
afterEach(() => remote.cleanup());

const id = (path: string) => itemIdOf(clone, 'HEAD', path);

function commit(message: string, change: () => void): void {
  change();
  remote.git(clone, 'add', '-A');
  remote.git(clone, 'commit', '-qm', message);
}

function write(path: string, text: string): void {
  mkdirSync(dirname(join(clone, path)), { recursive: true });
  writeFileSync(join(clone, path), text);
}

it('keeps the id across a rename, even one with edits', async () => {
  const before = await id('sessions/fix-login.md');
  expect(before).toMatch(/^fix-login-[0-9a-f]{16}$/);
  commit('rename', () => {
    mkdirSync(join(clone, 'sessions/done'));
    remote.git(clone, 'mv', 'sessions/fix-login.md', 'sessions/done/login-cookie.md');
    const file = join(clone, 'sessions/done/login-cookie.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace('#delegated-fix', '#claimed-fix'));
  });
  expect(await id('sessions/done/login-cookie.md')).toBe(before);
});

it('gives a file added again after a delete an id of its own', async () => {
  const original = await id('sessions/fix-login.md');
  commit('delete', () => rmSync(join(clone, 'sessions/fix-login.md')));
  commit('add again', () => write('sessions/fix-login.md', TEXT));
  const again = await id('sessions/fix-login.md');
  expect(again).not.toBe(original);
  expect(again).toMatch(/^fix-login-/);
});

it('names no id for a file the history does not hold', async () => {
  expect(await id('sessions/none.md')).toBeNull();
  write('sessions/new.md', TEXT);
  expect(await id('sessions/new.md')).toBeNull();
});

it('names no id for a directory, a symlink or the top: only a regular file is an item', async () => {
  commit('a symlink', () => symlinkSync('fix-login.md', join(clone, 'sessions/link.md')));
  expect(await id('sessions/fix-login.md')).toMatch(/^fix-login-/);
  expect(await id('sessions')).toBeNull();
  expect(await id('sessions/')).toBeNull();
  expect(await id('sessions/link.md')).toBeNull();
  expect(await id('.')).toBeNull();
});

it('always makes a valid id, whatever the file name', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary' }),
      fc.stringMatching(/^[0-9a-f]{40}$/),
      (name, hash) => {
        expect(isItemId(itemIdFrom(hash, name))).toBe(true);
      },
    ),
  );
});

it('gives a copy an id of its own, and its source keeps its id', async () => {
  const source = await id('sessions/fix-login.md');
  commit('copy', () => write('sessions/copy.md', TEXT.replace('Fix login', 'Fix logout')));
  const copy = await id('sessions/copy.md');
  expect(copy).toMatch(/^copy-[0-9a-f]{16}$/);
  expect(copy).not.toBe(source);
  expect(await id('sessions/fix-login.md')).toBe(source);
});

it('reads a file name as a name, never as a pattern', async () => {
  commit('bracket', () => write('s/x[1].md', TEXT));
  const before = await id('s/x[1].md');
  commit('other', () => write('s/x1.md', TEXT.replace('Fix', 'Other')));
  expect(await id('s/x[1].md')).toBe(before);
  expect(await id('s/x1.md')).not.toBe(before);
});
