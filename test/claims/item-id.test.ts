import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { itemIdFrom, itemIdOf, resolveItemIds } from '../../src/claims/item-id.js';
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

it('tells a copy from its source, which keeps its id when a claim names it there', async () => {
  const source = (await id('sessions/fix-login.md'))!;
  commit('copy', () => write('sessions/copy.md', TEXT.replace('Fix login', 'Fix logout')));
  // git follows the copy back to its source: the two files share one history id.
  expect(await id('sessions/copy.md')).toBe(source);
  const files = await Promise.all(
    ['sessions/fix-login.md', 'sessions/copy.md'].map(async (path) => ({
      path,
      carried: null,
      fromHistory: await id(path),
    })),
  );
  const unclaimed = resolveItemIds(files, new Map());
  expect(new Set(unclaimed.values()).size).toBe(2);
  expect([...unclaimed.values()]).not.toContain(source);
  const claimed = resolveItemIds(files, new Map([[source, 'sessions/fix-login.md']]));
  expect(claimed.get('sessions/fix-login.md')).toBe(source);
  expect(claimed.get('sessions/copy.md')).not.toBe(source);
  // A file that carries its id keeps it; another file with that history id is told apart.
  const carried = resolveItemIds([{ ...files[0]!, carried: source }, files[1]!], new Map());
  expect(carried.get('sessions/fix-login.md')).toBe(source);
  expect(carried.get('sessions/copy.md')).not.toBe(source);
});
