/**
 * `engine new` through the built binary on a real project: the file it writes (name, template,
 * Tags line) read back by engine's own tag scanner, never overwriting, the noun check, the title
 * that quotes a tag, and --edit with an editor run without a shell.
 */
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { splitWords } from '../../src/init/editor-command.js';
import { requestName } from '../../src/init/new-request.js';
import { scanTags } from '../../src/tags/scan-tags.js';
import { engine, expectError, makeTempDir, type TempDir } from '../cli/fixtures.js';

let t: TempDir;

const TABLE =
  '# Tags\n\n## §TAG_DISPATCH\n\n| Tag | Skill | Mode | Priority | Daemon |\n|---|---|---|---|---|\n' +
  '| `#delegated-fix` | `/fix` | agent | 1 | yes |\n| `#delegated-docs` | `/docs` | agent | 2 | no |\n';

beforeEach(async () => {
  t = await makeTempDir('engine-new-');
  await mkdir(t.path('directives'));
  await writeFile(t.path('directives', 'TAGS.md'), TABLE);
});

afterEach(async () => {
  await t.cleanup();
});

const today = (): string => requestName(new Date(), 'x', 1).slice(0, 10);
const sessions = async (): Promise<string[]> => (await readdir(t.path('sessions'))).sort();

/** The lifecycle tags engine reads in a file: what the daemon would see. */
async function tagsOf(path: string): Promise<string[]> {
  return scanTags(await readFile(path, 'utf8')).occurrences.map((o) => o.tag);
}

describe('engine new', () => {
  it('writes a #needs-NOUN request named date + slug, prints its path, never overwrites', async () => {
    const first = await engine(t.dir, ['new', 'fix', 'Login fails: empty password!']);
    const name = `${today()}-login-fails-empty-password.md`;
    expect(first).toEqual({ code: 0, stdout: `${t.path('sessions', name)}\n`, stderr: '' });
    const text = await readFile(t.path('sessions', name), 'utf8');
    expect(text).toBe(
      '# Login fails: empty password!\n**Tags**: #needs-fix\n\n## Request\n\n' +
        '<!-- What to do, where, and how to tell it is done. The agent reads this section. -->\n',
    );
    expect(await tagsOf(t.path('sessions', name))).toEqual(['#needs-fix']);

    const second = await engine(t.dir, ['new', 'fix', 'Login fails: empty password!']);
    const name2 = `${today()}-login-fails-empty-password-2.md`;
    expect(second.stdout).toBe(`${t.path('sessions', name2)}\n`);
    expect(await readFile(t.path('sessions', name), 'utf8')).toBe(text);
    expect(await sessions()).toEqual([name2, name].sort());
  });

  it('--approve writes #delegated-NOUN; a noun whose row says Daemon no is still a row', async () => {
    const result = await engine(t.dir, ['new', 'docs', 'Write the guide', '--approve']);
    expect(result.code).toBe(0);
    expect(await tagsOf(result.stdout.trim())).toEqual(['#delegated-docs']);
  });

  it('a title quoting a tag stays text: the only tag is the one engine wrote', async () => {
    const result = await engine(t.dir, ['new', 'fix', 'Undo #delegated-fix on `#done-x` #P0']);
    expect(result.code).toBe(0);
    const path = result.stdout.trim();
    expect(await tagsOf(path)).toEqual(['#needs-fix']);
    expect((await readFile(path, 'utf8')).split('\n')[0]).toBe(
      '# Undo `#delegated-fix` on `` `#done-x` `` `#P0`',
    );
    expect(basename(path)).toBe(`${today()}-undo-delegated-fix-on-done-x-p0.md`);
  });

  it('refuses a noun with no §TAG_DISPATCH row, listing the nouns; writes nothing', async () => {
    const result = await engine(t.dir, ['new', 'feature', 'Something']);
    expectError(
      result,
      `no §TAG_DISPATCH row for 'feature' in ${t.path('directives', 'TAGS.md')}; its nouns: docs, fix. Add a row there, or use one of these`,
    );
    await expect(readdir(t.path('sessions'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses an empty title; writes nothing', async () => {
    expectError(
      await engine(t.dir, ['new', 'fix', '  ']),
      'the title is empty: give the request a title',
    );
    await expect(readdir(t.path('sessions'))).rejects.toThrow(/ENOENT/);
  });

  it('--edit runs $VISUAL (over $EDITOR) without a shell, the path one argument', async () => {
    const editor = t.path('my editor.sh');
    // Records each argument on its own line; a shell would have expanded $HOME and split the path.
    await writeFile(editor, '#!/bin/sh\nfor a in "$@"; do echo "arg:$a"; done > "$ARGS_OUT"\n');
    await chmod(editor, 0o755);
    const out = t.path('args.txt');
    const result = await engine(t.dir, ['new', 'fix', "It's $HOME; rm", '--edit'], {
      VISUAL: `'${editor}' --wait '$HOME'`,
      EDITOR: 'false',
      ARGS_OUT: out,
    });
    expect(result.code).toBe(0);
    const path = result.stdout.trim();
    expect(await readFile(out, 'utf8')).toBe(`arg:--wait\narg:$HOME\narg:${path}\n`);
  });

  it('--approve --edit approves only after the editor exits 0: #needs-NOUN while it is open', async () => {
    const editor = t.path('editor.sh');
    // Records the Tags line the file has while the editor runs, then exits with $EDIT_CODE.
    await writeFile(editor, '#!/bin/sh\ngrep Tags "$1" > "$SEEN"\nexit "$EDIT_CODE"\n');
    await chmod(editor, 0o755);
    const seen = t.path('seen.txt');
    const ok = await engine(t.dir, ['new', 'fix', 'Edited first', '--approve', '--edit'], {
      VISUAL: editor,
      SEEN: seen,
      EDIT_CODE: '0',
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(await readFile(seen, 'utf8')).toBe('**Tags**: #needs-fix\n');
    expect(await readFile(ok.stdout.trim(), 'utf8')).toContain('**Tags**: #delegated-fix\n');

    const failed = await engine(t.dir, ['new', 'fix', 'Abandoned', '--approve', '--edit'], {
      VISUAL: editor,
      SEEN: seen,
      EDIT_CODE: '3',
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/ended with 3 \(.*abandoned\.md is written, not approved\)/);
    expect(await readFile(failed.stdout.trim(), 'utf8')).toContain('**Tags**: #needs-fix\n');
  });

  it('--edit with neither $VISUAL nor $EDITOR says so and writes nothing', async () => {
    const result = await engine(t.dir, ['new', 'fix', 'A title', '--edit'], {
      VISUAL: '',
      EDITOR: '',
    });
    expectError(result, /neither \$VISUAL nor \$EDITOR is set.*nothing written/);
    await expect(readdir(t.path('sessions'))).rejects.toThrow(/ENOENT/);
  });

  it('an editor that fails is an error; the file stays written', async () => {
    const result = await engine(t.dir, ['new', 'fix', 'A title', '--edit'], {
      VISUAL: 'false',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--edit: false ended with 1 \(.*a-title\.md is written\)/);
    expect(await sessions()).toEqual([`${today()}-a-title.md`]);
  });
});

describe('splitWords', () => {
  it('splits as a shell does, expanding nothing', () => {
    expect(splitWords(`code --wait`, 'EDITOR')).toEqual(['code', '--wait']);
    expect(splitWords(`'/opt/my ed' "a \\"b\\"" c\\ d $X`, 'EDITOR')).toEqual([
      '/opt/my ed',
      'a "b"',
      'c d',
      '$X',
    ]);
    expect(() => splitWords(`vim 'x`, 'EDITOR')).toThrow("$EDITOR has an unclosed ': vim 'x");
  });
});
