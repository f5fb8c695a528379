/**
 * The reconcile pass's memory of the tree, on real files: a full pass stats every file; a
 * directory pass lists again only the directories whose identity changed, so it finds what was
 * created, deleted or saved by rename, and leaves a write in place to the next full pass.
 */
import { writeFileSync } from 'node:fs';
import {
  appendFile,
  link,
  mkdir,
  mkdtemp,
  rename,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TreeState, type PassKind } from '../../src/watch/tree-state.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-tree-state-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** One pass: the files it visited, and which of them it found new or changed. */
async function pass(tree: TreeState, kind: PassKind) {
  const visited: string[] = [];
  const changed: string[] = [];
  await tree.pass(
    dir,
    kind,
    (path, _info, isChanged) => {
      visited.push(path.slice(dir.length + 1));
      if (isChanged) changed.push(path.slice(dir.length + 1));
    },
    () => false,
  );
  return { visited, changed };
}

describe('TreeState', () => {
  it('a pass that fails part way keeps what it listed: the next pass finds only the rest new', async () => {
    for (const name of ['1.md', '2.md', '3.md']) await writeFile(join(dir, name), 'x\n');
    const tree = new TreeState();
    const failing = tree.pass(
      dir,
      'full',
      (path) => {
        if (path.endsWith('2.md')) throw new Error('visit failed');
      },
      () => false,
    );
    await expect(failing).rejects.toThrow('visit failed');
    expect(await pass(tree, 'full')).toEqual({
      visited: ['1.md', '2.md', '3.md'],
      changed: ['3.md'],
    });
  });

  it('a directory pass finds files created, deleted and saved by rename; a write in place waits for a full pass', async () => {
    await mkdir(join(dir, 'a'));
    await mkdir(join(dir, 'b'));
    for (const name of ['a/1.md', 'a/2.md', 'b/3.md']) await writeFile(join(dir, name), 'x\n');
    const tree = new TreeState();
    expect(await pass(tree, 'full')).toEqual({
      visited: ['a/1.md', 'a/2.md', 'b/3.md'],
      changed: ['a/1.md', 'a/2.md', 'b/3.md'],
    });
    // Nothing changed: a directory pass stats no file.
    expect(await pass(tree, 'directories')).toEqual({ visited: [], changed: [] });

    await appendFile(join(dir, 'b', '3.md'), 'in place\n');
    expect(await pass(tree, 'directories')).toEqual({ visited: [], changed: [] });

    await writeFile(join(dir, 'a', '2.md.tmp'), 'saved\n');
    await rename(join(dir, 'a', '2.md.tmp'), join(dir, 'a', '2.md'));
    await writeFile(join(dir, 'a', 'new.md'), 'new\n');
    await unlink(join(dir, 'a', '1.md'));
    await mkdir(join(dir, 'c'));
    await writeFile(join(dir, 'c', '4.md'), 'new dir\n');
    // Only a/ and the root (for c/) changed: b/ is not listed again.
    expect(await pass(tree, 'directories')).toEqual({
      visited: ['a/2.md', 'a/new.md', 'c/4.md'],
      changed: ['a/2.md', 'a/new.md', 'c/4.md'],
    });

    expect((await pass(tree, 'full')).changed).toEqual(['b/3.md']);
    expect((await pass(tree, 'full')).changed).toEqual([]);
  });

  it('forgets a directory removed, and finds it new when it comes back', async () => {
    await mkdir(join(dir, 'a'));
    await writeFile(join(dir, 'a', '1.md'), 'x\n');
    const tree = new TreeState();
    await pass(tree, 'full');
    await rm(join(dir, 'a'), { recursive: true });
    expect(await pass(tree, 'directories')).toEqual({ visited: [], changed: [] });
    await mkdir(join(dir, 'a'));
    await writeFile(join(dir, 'a', '1.md'), 'x\n');
    expect((await pass(tree, 'directories')).changed).toEqual(['a/1.md']);
  });

  it('follows symlinks to files, never symlinked directories, skips ignored directories and names that are not UTF-8', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'engine-tree-outside-'));
    try {
      await writeFile(join(outside, 'target.md'), 'x\n');
      await mkdir(join(outside, 'sub'));
      await writeFile(join(outside, 'sub', 'hidden.md'), 'x\n');
      await symlink(join(outside, 'target.md'), join(dir, 'link.md'));
      await symlink(join(outside, 'sub'), join(dir, 'linked-dir'));
      await symlink(join(outside, 'sub'), join(dir, 'dir-link.md'));
      await mkdir(join(dir, 'node_modules'));
      await writeFile(join(dir, 'node_modules', 'skip.md'), 'x\n');
      writeFileSync(
        Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9, 0x2e, 0x6d, 0x64])]),
        'x\n',
      );
      await writeFile(join(dir, 'plain.md'), 'x\n');
      const tree = new TreeState();
      expect((await pass(tree, 'full')).visited).toEqual(['link.md', 'plain.md']);
      // The target written in place: no directory of the tree changed, a directory pass sees it.
      await appendFile(join(outside, 'target.md'), 'more\n');
      expect((await pass(tree, 'directories')).changed).toEqual(['link.md']);
      expect((await pass(tree, 'full')).changed).toEqual([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('TreeState: files a directory watch may not see written', () => {
  it('a directory pass stats symlinks and hard-linked files: written, made valid, left dangling', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'engine-tree-outside-'));
    try {
      await mkdir(join(dir, 'sub'));
      await writeFile(join(outside, 'hard.md'), 'x\n');
      await link(join(outside, 'hard.md'), join(dir, 'sub', 'hard.md'));
      await symlink(join(outside, 'later.md'), join(dir, 'dangling.md'));
      await writeFile(join(outside, 'target.md'), 'x\n');
      await symlink(join(outside, 'target.md'), join(dir, 'link.md'));
      await writeFile(join(dir, 'plain.md'), 'x\n');
      const gone: string[] = [];
      const tree = new TreeState((path) => gone.push(path.slice(dir.length + 1)));
      expect((await pass(tree, 'full')).visited).toEqual(['link.md', 'plain.md', 'sub/hard.md']);

      // Written through the other name, in place; the dangling link's target made; no directory
      // of the tree changed.
      await appendFile(join(outside, 'hard.md'), 'more\n');
      await writeFile(join(outside, 'later.md'), 'x\n');
      await unlink(join(outside, 'target.md'));
      expect(await pass(tree, 'directories')).toEqual({
        visited: ['dangling.md', 'sub/hard.md'],
        changed: ['dangling.md', 'sub/hard.md'],
      });
      expect(gone).toEqual(['link.md']);
      expect((await pass(tree, 'full')).changed).toEqual([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('TreeState: files gone', () => {
  it('names each markdown file a pass no longer finds: deleted, or under a removed directory', async () => {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'a.md'), 'a');
    await writeFile(join(dir, 'b.md'), 'b');
    await writeFile(join(dir, 'sub', 'c.md'), 'c');
    const gone: string[] = [];
    const tree = new TreeState((path) => gone.push(path.slice(dir.length + 1)));
    await pass(tree, 'full');
    expect(gone).toEqual([]);
    await unlink(join(dir, 'b.md'));
    await rm(join(dir, 'sub'), { recursive: true });
    await pass(tree, 'directories');
    expect(gone.sort()).toEqual(['b.md', join('sub', 'c.md')]);
  });
});
