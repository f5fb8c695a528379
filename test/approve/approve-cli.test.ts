/** The script forms of `engine tag approve`, run as real processes (stdin is a pipe). */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-approve-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const read = (name: string) => readFile(join(dir, name), 'utf8');
const run = (...args: string[]) => runCli(['tag', 'approve', ...args], { cwd: dir });

describe('engine tag approve <file> --to delegated|next', () => {
  it('swaps every #needs-X on the Tags line and in front matter, not the inline ones', async () => {
    // As with `engine tag swap`, a tag on both carriers is written once (front matter first).
    await writeFile(
      join(dir, 'r.md'),
      '---\ntags: [needs-fix, P1]\n---\n# R\n**Tags**: #needs-fix #needs-review #M\n\n- step #needs-chores\n',
    );
    expect(await run('r.md', '--to', 'delegated')).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await read('r.md')).toBe(
      '---\ntags: [delegated-fix, P1]\n---\n# R\n**Tags**: #delegated-review #M\n\n- step #needs-chores\n',
    );
  });

  it('--to next --inline N swaps only on line N', async () => {
    await writeFile(
      join(dir, 'r.md'),
      '# R\n**Tags**: #needs-fix\n\n1. one #needs-chores\n2. two #needs-chores\n',
    );
    expect((await run('r.md', '--to', 'next', '--inline', '5')).code).toBe(0);
    expect(await read('r.md')).toBe(
      '# R\n**Tags**: #needs-fix\n\n1. one #needs-chores\n2. two #next-chores\n',
    );
  });

  it('refuses when there is no #needs- tag there, and changes nothing', async () => {
    const text = '# R\n**Tags**: #delegated-fix\n\nProse #needs-fix only.\n';
    await writeFile(join(dir, 'r.md'), text);
    expect(await run('r.md', '--to', 'delegated')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'ERROR: No #needs- tag found on Tags line of r.md\n',
    });
    expect(await run('r.md', '--to', 'next', '--inline', '1')).toMatchObject({
      code: 1,
      stderr: 'ERROR: No #needs- tag found at line 1 of r.md\n',
    });
    expect(await read('r.md')).toBe(text);
  });

  it('refuses a tag on a line meant as the Tags line, and says which line and why', async () => {
    for (const written of ['Tags: #needs-fix', '**Tags:** #needs-fix', '  tags: #needs-fix']) {
      const text = `# R\n\n${written}\n\nBody #needs-chores.\n`;
      await writeFile(join(dir, 'r.md'), text);
      expect(await run('r.md', '--to', 'delegated')).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'ERROR: No #needs- tag found on Tags line of r.md: line 3 holds #needs-fix but is not ' +
          'the Tags line, which starts with **Tags**: (docs/TAGS.md)\n',
      });
      expect(await read('r.md')).toBe(text);
    }
  });

  it('refuses bad arguments: --to value, several paths, a missing file, --inline alone', async () => {
    await writeFile(join(dir, 'r.md'), '# R\n**Tags**: #needs-fix\n');
    expect(await run('r.md', '--to', 'claimed')).toMatchObject({
      code: 1,
      stderr: "ERROR: Invalid --to 'claimed': expected delegated or next\n",
    });
    expect((await run('r.md', 'r.md', '--to', 'next')).stderr).toMatch(
      /^ERROR: --to takes exactly one file/,
    );
    expect(await run('gone.md', '--to', 'next')).toMatchObject({
      code: 1,
      stderr: 'ERROR: File not found: gone.md\n',
    });
    expect((await run('r.md', '--inline', '2')).stderr).toMatch(/^ERROR: --inline goes with --to/);
    expect(await read('r.md')).toBe('# R\n**Tags**: #needs-fix\n');
  });
});

describe('engine tag approve --list', () => {
  beforeEach(async () => {
    await mkdir(join(dir, 'sessions', 's1'), { recursive: true });
    await writeFile(
      join(dir, 'sessions', 's1', 'a.md'),
      '# Alpha\n**Tags**: #needs-fix #P1\n\n1. one #needs-chores\n2. `#needs-code` is code\n',
    );
    await writeFile(join(dir, 'sessions', 'b.md'), '---\ntags:\n  - needs-review\n---\nNo title\n');
    await writeFile(join(dir, 'sessions', 'c.md'), '# Done\n**Tags**: #delegated-fix\n');
  });

  it('lists the pending items under sessions/ by default and changes nothing', async () => {
    const before = await read('sessions/s1/a.md');
    expect(await run('--list')).toEqual({
      code: 0,
      stdout: [
        'sessions/b.md:3  #needs-review  (front matter)  b.md',
        'sessions/s1/a.md:2  #needs-fix  (Tags line)  Alpha',
        'sessions/s1/a.md:4  #needs-chores  (inline)  Alpha',
        '',
      ].join('\n'),
      stderr: '',
    });
    expect(await read('sessions/s1/a.md')).toBe(before);
  });

  it('--json gives path, title, tag, line, column and place', async () => {
    const result = await run('sessions/s1', '--list', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      {
        path: 'sessions/s1/a.md',
        title: 'Alpha',
        tag: '#needs-fix',
        line: 2,
        column: 11,
        place: 'tags-line',
      },
      {
        path: 'sessions/s1/a.md',
        title: 'Alpha',
        tag: '#needs-chores',
        line: 4,
        column: 8,
        place: 'prose',
      },
    ]);
  });

  // Nothing listed over a misspelled path, or with a request that could not be read, was a
  // wrong answer with exit 0 (found by a walk): as `engine tag find`, exit 1 and exit 2.
  it('fails on a path that is not there; a skipped file is named and makes the exit 2', async () => {
    for (const path of ['nope', 'sessions/nope.md', 'sessions/b.md/']) {
      const result = await run(path, '--list');
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        /^ERROR: sessions\/b\.md\/: not a directory|^ERROR: .*no such file/,
      );
    }
    await writeFile(
      join(dir, 'sessions', 'big.md'),
      `# Big\n**Tags**: #needs-fix\n${'x'.repeat(1 << 20)}\n`,
    );
    for (const json of [[], ['--json']]) {
      const result = await run('sessions/', '--list', ...json);
      expect(result.code).toBe(2);
      expect(result.stdout).toContain('sessions/s1/a.md');
      expect(result.stderr).toMatch(/skipped sessions\/big\.md: larger than/);
      expect(result.stderr).toContain('ERROR: incomplete answer: 1 skipped (named above)\n');
    }
  });

  it('prints nothing for a tree without items; --json alone and --list --to are refused', async () => {
    expect(await run('sessions/c.md', '--list')).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await run('--json')).stderr).toBe('ERROR: --json goes with --list\n');
    expect((await run('--list', '--to', 'next')).stderr).toMatch(/^ERROR: --list changes nothing/);
  });
});

describe('engine tag approve without a terminal', () => {
  it('refuses the interactive form and says to use --to or --list', async () => {
    await mkdir(join(dir, 'sessions'));
    await writeFile(join(dir, 'sessions', 'a.md'), '# A\n**Tags**: #needs-fix\n');
    const result = await run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ERROR: stdin is not a terminal: use --to .* or --list/);
    expect(await read('sessions/a.md')).toBe('# A\n**Tags**: #needs-fix\n');
  });
});
