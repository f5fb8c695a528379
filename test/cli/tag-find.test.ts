/** `engine tag find` through the built binary: what it lists, skips and prints. */
import { spawn } from 'node:child_process';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { CLI } from '../helpers/run-cli.js';
import { OtherUserDir } from '../helpers/other-user.js';
import { AS_NOBODY, canRunAsNobody } from '../process/spawned.js';
import { engine, expectError, expectSuccess, makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir('engine-find-');
});

afterEach(async () => {
  await t.cleanup();
});

/** Writes files (creating directories) below the temporary directory. */
async function tree(files: Record<string, string | Buffer>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(t.path(name, '..'), { recursive: true });
    await writeFile(t.path(name), content);
  }
}

const run = (...args: string[]) => engine(t.dir, args);
const lines = (...paths: string[]) => paths.map((p) => `${p}\n`).join('');

describe('engine tag find', () => {
  it('with --verbose names the file and line of a front matter whose tags cannot be read', async () => {
    await tree({
      'sessions/bad.md': '---\ntitle: x\ntags: [needs-fix\n---\n# Bad\n',
      'sessions/map.md': '---\ntags:\n  needs-fix: yes\n---\n# Map\n',
      'sessions/good.md': '---\ntags: [needs-fix]\n---\n# Good\n',
    });
    const quiet = await run('tag', 'find', '#needs-fix');
    expect(quiet.stdout).toBe(lines('sessions/good.md'));
    expect(quiet.stderr).toBe('');
    const verbose = await run('tag', 'find', '#needs-fix', '--verbose');
    expect(verbose.code).toBe(0);
    expect(verbose.stdout).toBe(lines('sessions/good.md'));
    expect(verbose.stderr).toMatch(
      /^WARN: sessions\/bad\.md:[34]: front matter is not valid YAML/m,
    );
    expect(verbose.stderr).toMatch(/^WARN: sessions\/map\.md:3: front matter `tags:` holds/m);
  });

  it('lists files with the tag as a real tag, sorted, below sessions/ by default', async () => {
    await tree({
      'sessions/b/deep.md': '# B\n**Tags**: #needs-fix\n',
      'sessions/a.md': '# A\n\nProse mentions #needs-fix here.\n',
      'sessions/c.markdown': '---\ntags: [needs-fix]\n---\n# C\n',
      'sessions/Z.MD': '# Z\n**Tags**: #needs-fix\n',
      'sessions/code.md': '# C\n\n`#needs-fix` and\n\n```\n#needs-fix\n```\n',
      'sessions/prefix.md': '# P\n**Tags**: #needs-fix-later #needs #xneeds-fix\n',
      'sessions/attached.md': 'foo#needs-fix and #needs-fix_x\n',
      'sessions/notes.txt': '**Tags**: #needs-fix\n',
      'elsewhere/e.md': '**Tags**: #needs-fix\n',
    });
    const result = await run('tag', 'find', '#needs-fix');
    expectSuccess(
      result,
      lines('sessions/Z.MD', 'sessions/a.md', 'sessions/b/deep.md', 'sessions/c.markdown'),
    );
  });

  it('joins each given path with the path below it; a missing path is an error', async () => {
    await tree({
      'docs/x.md': '**Tags**: #needs-fix\n',
      'docs/sub/y.md': '**Tags**: #needs-fix\n',
      'other/z.md': '**Tags**: #needs-fix\n',
    });
    const results = await Promise.all([
      run('tag', 'find', '#needs-fix', 'docs/'),
      run('tag', 'find', '#needs-fix', 'other', 'docs', 'docs', 'docs/x.md'),
      run('tag', 'find', '#needs-fix', t.path('docs', 'sub')),
      engine(t.path('docs', 'sub'), ['tag', 'find', '#needs-fix', '.', '..']),
      run('tag', 'find', '#needs-fix', 'missing', 'docs/none.md'),
      run('tag', 'find', '#needs-fix'),
      run('tag', 'find', '#no-such-tag', 'docs'),
    ]);
    expectSuccess(results[0]!, lines('docs/sub/y.md', 'docs/x.md'));
    expectSuccess(results[1]!, lines('docs/sub/y.md', 'docs/x.md', 'other/z.md'));
    expectSuccess(results[2]!, lines(t.path('docs', 'sub', 'y.md')));
    expectSuccess(results[3]!, lines('../sub/y.md', '../x.md', 'y.md'));
    // Nothing found under a misspelled path must not read as "nothing tagged".
    expectError(results[4]!, 'missing: no such file or directory: nothing searched');
    expectError(results[5]!, 'sessions/: no such file or directory: nothing searched');
    expectSuccess(results[6]!);
  });

  it('matches globs: * is [a-z0-9-]*', async () => {
    await tree({
      'd/a.md': '**Tags**: #delegated-fix\n',
      'd/b.md': '**Tags**: #delegated-loop-2\n',
      'd/c.md': '**Tags**: #delegatedx\n',
      'd/d.md': '**Tags**: #delegated-Fix\n',
      'd/e.md': '**Tags**: #needs-fix\n',
      'd/f.md': '**Tags**: #delegated-\n',
    });
    const results = await Promise.all([
      run('tag', 'find', '#delegated-*', 'd'),
      run('tag', 'find', '#*-fix', 'd'),
      run('tag', 'find', '#*', 'd'),
    ]);
    expectSuccess(results[0]!, lines('d/a.md', 'd/b.md', 'd/f.md'));
    expectSuccess(results[1]!, lines('d/a.md', 'd/e.md'));
    expectSuccess(results[2]!, lines('d/a.md', 'd/b.md', 'd/c.md', 'd/e.md', 'd/f.md'));
  });

  it('--context prints file:N, lines N-1..N+1 and a blank line per occurrence', async () => {
    await tree({
      's/a.md':
        '#needs-x first\nsecond\nthird #needs-x and #needs-x\r\nfourth\n\n```\n#needs-x\n```\nlast #needs-x',
      's/b.md': '---\ntags: needs-x\n---\n**Tags**: #needs-x\n',
    });
    const result = await run('tag', 'find', '#needs-x', 's', '--context');
    expectSuccess(
      result,
      [
        's/a.md:1',
        '  1: #needs-x first',
        '  2: second',
        '',
        's/a.md:3',
        '  2: second',
        '  3: third #needs-x and #needs-x',
        '  4: fourth',
        '',
        's/a.md:9',
        '  8: ```',
        '  9: last #needs-x',
        '',
        's/b.md:2',
        '  1: ---',
        '  2: tags: needs-x',
        '  3: ---',
        '',
        's/b.md:4',
        '  3: ---',
        '  4: **Tags**: #needs-x',
        '',
        '',
      ].join('\n'),
    );
  });

  it('--tags-only looks at the Tags line and front matter only', async () => {
    await tree({
      's/line.md': '# L\n**Tags**: #needs-x\n',
      's/front.md': '---\ntags:\n  - "#needs-x"\n---\n# F\n',
      's/prose.md': '# P\n**Tags**: #other\n\nDo #needs-x.\n',
    });
    const result = await run('tag', 'find', '#needs-x', 's', '--tags-only');
    expectSuccess(result, lines('s/front.md', 's/line.md'));
  });

  it('--json gives paths and occurrences, and survives odd file names', async () => {
    const odd = `it's a "file" $(x).md`;
    await tree({
      [`s/${odd}`]: '# O\n**Tags**: #needs-x\n\nAlso #needs-x.\n',
      's/new\nline.md': '---\ntags: [needs-x]\n---\n',
    });
    const [json, plain] = await Promise.all([
      run('tag', 'find', '#needs-x', 's', '--json'),
      run('tag', 'find', '#needs-x', 's'),
    ]);
    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toEqual([
      {
        path: `s/${odd}`,
        occurrences: [
          { tag: '#needs-x', line: 2, column: 11, place: 'tags-line' },
          { tag: '#needs-x', line: 4, column: 6, place: 'prose' },
        ],
      },
      {
        path: 's/new\nline.md',
        occurrences: [{ tag: '#needs-x', line: 2, column: 8, place: 'front-matter' }],
      },
    ]);
    expectSuccess(plain, lines(`s/${odd}`, 's/new\nline.md'));
    const none = await run('tag', 'find', '#nothing', 's', '--json');
    expectSuccess(none, '[]\n');
  });

  it('skips .git, node_modules, lock directories, symlinked directories and non-text files', async () => {
    await tree({
      's/ok.md': '**Tags**: #needs-x\n',
      's/.git/x.md': '**Tags**: #needs-x\n',
      's/node_modules/pkg/x.md': '**Tags**: #needs-x\n',
      's/.ok.md.engine-lock/x.md': '**Tags**: #needs-x\n',
      's/binary.md': Buffer.from('**Tags**: #needs-x\n\0\0\x01\x02', 'latin1'),
      's/latin1.md': Buffer.from('# Caf\xe9\n**Tags**: #needs-x\n', 'latin1'),
      's/.hidden.md': '**Tags**: #needs-x\n',
      's/big.md': `**Tags**: #needs-x\n${'x'.repeat(1024 * 1024)}\n`,
      's/big-other.md': `**Tags**: #other\n${'x'.repeat(1024 * 1024)}\n`,
      'outside/y.md': '**Tags**: #needs-x\n',
    });
    await symlink('../outside', t.path('s', 'linked-dir'));
    await symlink('../outside/y.md', t.path('s', 'linked-file.md'));
    await symlink('nowhere.md', t.path('s', 'dangling.md'));
    const result = await run('tag', 'find', '#needs-x', 's');
    expect(result.stdout).toBe(lines('s/.hidden.md', 's/linked-file.md', 's/ok.md'));
    // A file whose bytes hold the tag and whose tags could not be read is named; the answer,
    // printed, may lack it: exit 2, as grep's on a file it cannot read.
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'WARN: skipped s/big.md: larger than 1048576 bytes, not parsed\n' +
        'WARN: skipped s/binary.md: not UTF-8 text\n' +
        'WARN: skipped s/latin1.md: not UTF-8 text\n' +
        'ERROR: incomplete answer: 3 skipped (named above)\n',
    );
    expect(result.stderr).not.toContain('big-other.md');
  });

  it('skips a file that takes too long to parse, names it, and returns the others', async () => {
    // The HTML line makes the line scanner hand the file to remark, which is slow on the emphasis run.
    const hostile = `# H\n**Tags**: #needs-x\n\n<br>\n\n${'*a'.repeat(30_000)}\n`;
    await tree({
      's/a.md': '**Tags**: #needs-x\n',
      's/emphasis-run.md': `**Tags**: #needs-x\n\n${'*a'.repeat(30_000)}\n`,
      's/hostile.md': hostile,
      's/m.md': '# M\n\nText #needs-x\n',
      's/z.md': '---\ntags: [needs-x]\n---\n',
    });
    const started = Date.now();
    const result = await engine(t.dir, ['tag', 'find', '#needs-x', 's'], {
      ENGINE_SCAN_TIMEOUT_MS: '1500',
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result.code).toBe(2);
    // The same emphasis run without HTML is decided by the line scanner, in linear time.
    expect(result.stdout).toBe(lines('s/a.md', 's/emphasis-run.md', 's/m.md', 's/z.md'));
    expect(result.stderr).toBe(
      'WARN: skipped s/hostile.md: parsing took longer than 1500 ms\n' +
        'ERROR: incomplete answer: 1 skipped (named above)\n',
    );
  });

  it('does not charge a worker start-up to the parse time limit', async () => {
    // Loading remark in a fresh worker takes longer than parsing a small file; a limit meant
    // for parsing must not skip every file on a cold start.
    await tree({
      's/a.md': '**Tags**: #needs-x\n',
      's/b.md': '# B\n\nText #needs-x\n',
      's/c.md': '---\ntags: [needs-x]\n---\n',
    });
    const result = await engine(t.dir, ['tag', 'find', '#needs-x', 's'], {
      ENGINE_SCAN_TIMEOUT_MS: '250',
    });
    expectSuccess(result, lines('s/a.md', 's/b.md', 's/c.md'));
  });

  it.skipIf(!canRunAsNobody())(
    'names a directory it cannot list, and lists the rest (run as another user)',
    async () => {
      await tree({
        'sessions/ok.md': '**Tags**: #needs-fix\n',
        'sessions/locked/x.md': '**Tags**: #needs-fix\n',
      });
      for (const dir of ['.', 'sessions']) await chmod(t.path(dir), 0o755);
      await chmod(t.path('sessions/ok.md'), 0o644);
      await chmod(t.path('sessions/locked'), 0o000);
      // The checkout may sit where nobody cannot enter (a root clone in /root): a copy it can read.
      const install = await OtherUserDir.create();
      onTestFinished(() => install.remove());
      const { cli } = await install.installEngine();
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
        (resolve, reject) => {
          const child = spawn(
            'setpriv',
            [...AS_NOBODY, process.execPath, cli, 'tag', 'find', '#needs-fix'],
            { cwd: t.dir },
          );
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        },
      );
      expect(result.stdout).toBe(lines('sessions/ok.md'));
      expect(result.stderr).toBe(
        'WARN: skipped sessions/locked: cannot list: EACCES\n' +
          'ERROR: incomplete answer: 1 skipped (named above)\n',
      );
      expect(result.code).toBe(2);
    },
  );

  it('stops quietly when the reader closes the pipe', async () => {
    await tree({ 's/a.md': '**Tags**: #needs-x\n' });
    const child = spawn(process.execPath, [CLI, 'tag', 'find', '#needs-x', 's', '--context'], {
      cwd: t.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('refuses an invalid pattern or time limit', async () => {
    const results = await Promise.all([
      run('tag', 'find', 'needs-x'),
      run('tag', 'find', '#needs x'),
      run('tag', 'find', ''),
      engine(t.dir, ['tag', 'find', '#x'], { ENGINE_SCAN_TIMEOUT_MS: 'soon' }),
    ]);
    const pattern = (p: string) =>
      `Invalid tag pattern '${p}': expected a tag such as '#needs-fix' or a glob such as '#delegated-*'`;
    expectError(results[0]!, pattern('needs-x'));
    expectError(results[1]!, pattern('#needs x'));
    expectError(results[2]!, pattern(''));
    expectError(results[3]!, /^ERROR: Invalid ENGINE_SCAN_TIMEOUT_MS 'soon'/);
  });
});

describe('a request requeued before Recovery entries quoted their tags (issue 19)', () => {
  const OLD = [
    '# Fix the login',
    '**Tags**: #needs-fix',
    '',
    'Body.',
    '',
    '## Recovery',
    '*   **Date**: 2026-11-22T07:45:12.000Z',
    '*   **Reason**: agent exited with code 0 without marking #done-fix',
    '*   **Prior Session**: sessions/2026_11_22_074500_FIX_login_3f9a/',
    '*   **Action**: Re-queued for processing (back to #needs-fix, approve again to retry)',
    '*   **Attempt**: 1',
    '',
    '## Recovery',
    '*   **Date**: 2026-11-22T08:45:12.000Z',
    '*   **Reason**: agent exited with code 3 without marking #done-fix; retry 1 of 2',
    '*   **Prior Session**: sessions/2026_11_22_084500_FIX_login_3f9a/',
    '*   **Action**: Back to #delegated-fix, dispatched again without a new approval',
    '*   **Attempt**: 2',
    '',
  ].join('\n');

  it('reads as what it is: not done, not delegated, one pending approval', async () => {
    await tree({ 'sessions/R.md': OLD });
    expectSuccess(await run('tag', 'find', '#done-*'));
    expectSuccess(await run('tag', 'find', '#delegated-*'));
    expectSuccess(
      await run('tag', 'find', '#needs-fix', '--json'),
      (() => {
        const occurrences = [{ tag: '#needs-fix', line: 2, column: 11, place: 'tags-line' }];
        return `${JSON.stringify([{ path: 'sessions/R.md', occurrences }], null, 2)}\n`;
      })(),
    );
    const list = await run('tag', 'approve', '--list');
    expectSuccess(list, 'sessions/R.md:2  #needs-fix  (Tags line)  Fix the login\n');
    const waited = await run('await-tag', 'sessions/R.md', '#done-fix', '--timeout', '0');
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(/^ERROR: Timed out after 0 s waiting for '#done-fix'/);
  });
});
