/**
 * `engine tag add | remove | swap` through the built binary: the messages, exit codes and byte
 * guarantees of docs/CLI.md. Independent invocations run in parallel to keep the suite fast.
 */
import { chmod, mkdir, readFile, readlink, lstat, symlink, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  engine,
  expectError,
  expectSuccess,
  expectUntouched,
  leftovers,
  makeTempDir,
  snapshot,
  type TempDir,
} from './fixtures.js';

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir();
});

afterEach(async () => {
  expect(await leftovers(t.dir)).toEqual([]);
  await t.cleanup();
});

/** Writes `text` to `name` in the temporary directory and returns the name. */
async function put(name: string, text: string | Buffer): Promise<string> {
  await writeFile(t.path(name), text);
  return name;
}

const read = (name: string): Promise<string> => readFile(t.path(name), 'utf8');

/** Runs `act`, and checks that it did not write the file `name`: same bytes, same inode. */
async function expectNoWrite(name: string, act: () => Promise<void>): Promise<void> {
  const before = await snapshot(t.path(name));
  await act();
  await expectUntouched(t.path(name), before);
}

/** Writes each file approved (#delegated-x), claims them all at once, and checks each claim. */
async function claimEach(names: string[]): Promise<void> {
  await Promise.all(names.map((name) => put(name, '# T\n**Tags**: #delegated-x\n')));
  const swaps = await Promise.all(
    names.map((name) => run('tag', 'swap', name, '#delegated-x', '#claimed-x')),
  );
  for (const [i, result] of swaps.entries()) {
    expectSuccess(result);
    expect(await read(names[i] as string)).toBe('# T\n**Tags**: #claimed-x\n');
  }
}
const run = (...args: string[]) => engine(t.dir, args);

describe('engine tag add', () => {
  it('creates the Tags line right after the H1, or at the top after front matter', async () => {
    const cases: Array<[string, string]> = [
      ['# Title\n\nBody\n', '# Title\n**Tags**: #needs-fix\n\nBody\n'],
      ['# Title\nBody\n', '# Title\n**Tags**: #needs-fix\n\nBody\n'],
      ['Body only\n', '**Tags**: #needs-fix\n\nBody only\n'],
      ['---\ntitle: x\n---\nBody\n', '---\ntitle: x\n---\n**Tags**: #needs-fix\n\nBody\n'],
      ['', '**Tags**: #needs-fix\n'],
    ];
    const names = await Promise.all(cases.map(([text], i) => put(`case${i}.md`, text)));
    const results = await Promise.all(names.map((name) => run('tag', 'add', name, '#needs-fix')));
    for (const [i, result] of results.entries()) {
      expectSuccess(result);
      expect(await read(names[i] as string)).toBe(cases[i]?.[1]);
    }
  });

  it('appends to an existing Tags line and is idempotent (nothing is written twice)', async () => {
    const name = await put('a.md', '# T\n\n**Tags**: #P1\n\nText #needs-fix in prose\n');
    expectSuccess(await run('tag', 'add', name, '#needs-fix'));
    expect(await read(name)).toBe('# T\n\n**Tags**: #P1 #needs-fix\n\nText #needs-fix in prose\n');
    await expectNoWrite(name, async () => {
      expectSuccess(await run('tag', 'add', name, '#needs-fix'));
    });
  });

  it('counts a tag in front matter as present', async () => {
    const text = '---\ntags: [needs-fix]\n---\n# T\n';
    const name = await put('fm.md', text);
    await expectNoWrite(name, async () => {
      expectSuccess(await run('tag', 'add', name, '#needs-fix'));
    });
  });
});

describe('engine tag remove', () => {
  it('removes the whole tag from the Tags line and keeps the others', async () => {
    const name = await put('a.md', '# T\n**Tags**: #a #needs-fix #b\n\nSee #needs-fix.\n');
    expectSuccess(await run('tag', 'remove', name, '#needs-fix'));
    expect(await read(name)).toBe('# T\n**Tags**: #a #b\n\nSee #needs-fix.\n');
  });

  it('is a no-op (exit 0, nothing written) when the tag is missing or only a prefix', async () => {
    const name = await put('a.md', '# T\n**Tags**: #needs-fix-later\n\nProse #needs-fix\n');
    await expectNoWrite(name, async () => {
      expectSuccess(await run('tag', 'remove', name, '#needs-fix'));
    });
  });

  it('with --inline N removes the tag on line N and keeps the surrounding text', async () => {
    const text = '# T\n**Tags**: #needs-x\n\nFix this #needs-x now.\nAnd #needs-x here.\n';
    const name = await put('a.md', text);
    expectSuccess(await run('tag', 'remove', name, '#needs-x', '--inline', '4'));
    expect(await read(name)).toBe('# T\n**Tags**: #needs-x\n\nFix this now.\nAnd #needs-x here.\n');
    expectSuccess(await run('tag', 'remove', name, '#needs-x', '--inline=2'));
    expect(await read(name)).toBe('# T\n**Tags**:\n\nFix this now.\nAnd #needs-x here.\n');
  });

  it('with --inline N refuses a line without the tag as a real tag', async () => {
    const text = '# T\n\nCode `#needs-x` only.\nplain #needs-xy\n\n```\n#needs-x\n```\n';
    const name = await put('a.md', text);
    const before = await snapshot(t.path(name));
    const results = await Promise.all(
      ['3', '4', '7'].map((line) => run('tag', 'remove', name, '#needs-x', '--inline', line)),
    );
    for (const [i, line] of ['3', '4', '7'].entries()) {
      expectError(results[i]!, `Tag '#needs-x' not found at line ${line} of a.md`);
    }
    await expectUntouched(t.path(name), before);
  });
});

describe('engine tag swap', () => {
  it('swaps the tag on the Tags line, then refuses a second claim', async () => {
    const name = await put('a.md', '# T\n**Tags**: #P1 #delegated-x\n\nThe #delegated-x text.\n');
    expectSuccess(await run('tag', 'swap', name, '#delegated-x', '#claimed-x'));
    const after = '# T\n**Tags**: #P1 #claimed-x\n\nThe #delegated-x text.\n';
    expect(await read(name)).toBe(after);
    await expectNoWrite(name, async () => {
      expectError(
        await run('tag', 'swap', name, '#delegated-x', '#claimed-x'),
        "None of '#delegated-x' found on Tags line of a.md (already claimed?)",
      );
    });
  });

  it('never leaves a duplicate and never writes the new tag twice', async () => {
    const cases: Array<[string, string, string, string]> = [
      ['**Tags**: #a #b #c\n', '#a,#b', '#n', '**Tags**: #n #c\n'],
      ['**Tags**: #a #n\n', '#a', '#n', '**Tags**: #n\n'],
      ['**Tags**: #done-a #done-a\n', '#done-a', '#done-a', '**Tags**: #done-a\n'],
      ['**Tags**: #x #a\n', '#zz, #a', '#n', '**Tags**: #x #n\n'],
    ];
    const names = await Promise.all(cases.map(([text], i) => put(`c${i}.md`, text)));
    const results = await Promise.all(
      cases.map(([, olds, next], i) => run('tag', 'swap', names[i] as string, olds, next)),
    );
    for (const [i, result] of results.entries()) {
      expectSuccess(result);
      expect(await read(names[i] as string)).toBe(cases[i]?.[3]);
    }
  });

  it('names every old tag when none is present', async () => {
    const name = await put('a.md', '# T\n**Tags**: #claimed-x\n\nProse #delegated-x\n');
    await expectNoWrite(name, async () => {
      expectError(
        await run('tag', 'swap', name, '#delegated-x,#next-x', '#claimed-x'),
        "None of '#delegated-x,#next-x' found on Tags line of a.md (already claimed?)",
      );
    });
  });

  it('with --inline N swaps on line N only, or names the line', async () => {
    const text = '# T\n**Tags**: #needs-x\n\nDo it #needs-x, then #needs-x.\n`#needs-x`\n';
    const name = await put('a.md', text);
    expectSuccess(await run('tag', 'swap', name, '#needs-x', '#done-x', '--inline', '4'));
    expect(await read(name)).toBe('# T\n**Tags**: #needs-x\n\nDo it #done-x, then.\n`#needs-x`\n');
    const before = await snapshot(t.path(name));
    const results = await Promise.all([
      run('tag', 'swap', name, '#needs-x', '#done-x', '--inline', '5'),
      run('tag', 'swap', name, '#needs-x', '#done-x', '--inline', '3'),
    ]);
    expectError(results[0]!, "None of '#needs-x' found at line 5 of a.md");
    expectError(results[1]!, "None of '#needs-x' found at line 3 of a.md");
    await expectUntouched(t.path(name), before);
  });
});

describe('one noun has one lifecycle state (issue 19)', () => {
  it('tag add of a lifecycle tag where the noun has a state is refused, with the command to use', async () => {
    const cases: Array<[string, string, string]> = [
      [
        '**Tags**: #done-fix\n',
        '#delegated-fix',
        "Swap its state instead, naming every state it has: engine tag swap 'a0.md' '#done-fix' '#delegated-fix'",
      ],
      [
        '**Tags**: #claimed-fix #P1\n',
        '#delegated-fix',
        "Swap its state instead, naming every state it has: engine tag swap 'a1.md' '#claimed-fix' '#delegated-fix'",
      ],
      [
        '---\ntags: [needs-fix]\n---\n# T\n',
        '#delegated-fix',
        "Approve it instead: engine tag approve 'a2.md' --to delegated (or engine tag swap 'a2.md' '#needs-fix' '#delegated-fix')",
      ],
    ];
    for (const [i, [text, tag, remedy]] of cases.entries()) {
      const name = await put(`a${i}.md`, text);
      await expectNoWrite(name, async () => {
        const result = await run('tag', 'add', name, tag);
        const state = text.match(/#?(done|claimed|needs)-fix/)?.[0].replace(/^#?/, '#');
        expectError(
          result,
          `Refused to edit ${name}: its Tags line or front matter would hold ${state} ${tag}, two lifecycle states of one noun (one noun has one state); nothing was written. ${remedy}`,
        );
      });
    }
  });

  it('tag add of another noun, of a tag already there, or of a tag in prose only is accepted', async () => {
    const name = await put('a.md', '# T\n**Tags**: #done-fix\n\nSee #delegated-docs.\n');
    expectSuccess(await run('tag', 'add', name, '#delegated-docs'));
    expectSuccess(await run('tag', 'add', name, '#done-fix'));
    expectSuccess(await run('tag', 'add', name, '#P1'));
    expect(await read(name)).toBe(
      '# T\n**Tags**: #done-fix #delegated-docs #P1\n\nSee #delegated-docs.\n',
    );
  });

  it('a swap or an approval whose result holds two states of one noun is refused; one naming every state mends it', async () => {
    const name = await put('a.md', '# T\n**Tags**: #done-fix #delegated-fix\n');
    await expectNoWrite(name, async () => {
      expectError(
        await run('tag', 'swap', name, '#delegated-fix', '#claimed-fix'),
        /would hold #done-fix #claimed-fix, two lifecycle states of one noun .* engine tag swap 'a\.md' '#done-fix,#delegated-fix' '#claimed-fix'$/m,
      );
    });
    const needs = await put('n.md', '# T\n**Tags**: #needs-fix #done-fix\n');
    await expectNoWrite(needs, async () => {
      expectError(
        await run('tag', 'approve', needs, '--to', 'delegated'),
        /^ERROR: Refused to edit n\.md: its Tags line or front matter would hold #delegated-fix #done-fix, two lifecycle states/,
      );
    });
    expectSuccess(await run('tag', 'swap', name, '#done-fix,#delegated-fix', '#needs-fix'));
    expect(await read(name)).toBe('# T\n**Tags**: #needs-fix\n');
    // A swap of an inline item leaves the state on the Tags line alone.
    const inline = await put('i.md', '# T\n**Tags**: #claimed-fix\n\n- step #needs-fix\n');
    expectSuccess(await run('tag', 'swap', inline, '#needs-fix', '#done-fix', '--inline', '4'));
  });
});

describe('paths', () => {
  it('handles quotes, $(...), spaces and newlines in file names', async () => {
    const names = [`it's a "file" $(x).md`, 'new\nline.md'];
    await claimEach(names);
    const again = await Promise.all(
      names.map((name) => run('tag', 'swap', name, '#delegated-x', '#claimed-x')),
    );
    for (const [i, result] of again.entries()) {
      expectError(
        result,
        `None of '#delegated-x' found on Tags line of ${names[i]} (already claimed?)`,
      );
    }
    await Promise.all(names.map((name) => run('tag', 'add', name, '#P1')));
    for (const name of names) expect(await read(name)).toBe('# T\n**Tags**: #claimed-x #P1\n');
    expect(await leftovers(t.dir)).toEqual([]);
  });

  it('edits files whose names have up to 255 bytes, in any script', async () => {
    // The lock directory and the temporary file add about 20 bytes to the name: from 236 bytes
    // on, they passed the 255-byte limit of a file name (ENAMETOOLONG).
    const names = [
      `${'a'.repeat(237)}.md`,
      `${'b'.repeat(247)}.md`,
      `${'c'.repeat(252)}.md`,
      `${'é'.repeat(126)}.md`,
      `${'😀'.repeat(63)}.md`,
    ];
    expect(names.map((name) => Buffer.byteLength(name))).toEqual([240, 250, 255, 255, 255]);
    await claimEach(names);
  });

  it('resolves relative paths from the current directory; ./ allows a leading dash', async () => {
    await mkdir(t.path('sub', 'deeper'), { recursive: true });
    await put('sub/deeper/a.md', '# A\n');
    await put('-dash.md', '# D\n');
    const results = await Promise.all([
      engine(t.path('sub'), ['tag', 'add', 'deeper/a.md', '#x']),
      engine(t.path('sub', 'deeper'), ['tag', 'add', '../deeper/./a.md', '#y']),
      engine(t.dir, ['tag', 'add', './-dash.md', '#z']),
    ]);
    expectSuccess(results[0]!);
    expectSuccess(results[1]!);
    expectSuccess(results[2]!);
    expect(await read('sub/deeper/a.md')).toMatch(/^# A\n\*\*Tags\*\*: #(x #y|y #x)\n$/);
    expect(await read('-dash.md')).toBe('# D\n**Tags**: #z\n');
    expect(await leftovers(t.path('sub', 'deeper'))).toEqual([]);
  });
});

describe('bytes outside the edited tag stay as they were', () => {
  it('keeps CRLF, a BOM and a missing final newline', async () => {
    const bom = '\uFEFF';
    const files: Array<[string, string, string[], string]> = [
      [
        'crlf.md',
        '# T\r\n**Tags**: #a #b\r\n\r\nBody #a\r\n',
        ['remove', '#a'],
        '# T\r\n**Tags**: #b\r\n\r\nBody #a\r\n',
      ],
      ['crlf-new.md', '# T\r\n\r\nBody\r\n', ['add', '#n'], '# T\r\n**Tags**: #n\r\n\r\nBody\r\n'],
      [
        'bom.md',
        `${bom}# T\n**Tags**: #delegated-x\n`,
        ['swap', '#delegated-x', '#claimed-x'],
        `${bom}# T\n**Tags**: #claimed-x\n`,
      ],
      ['no-eol.md', '# T\n**Tags**: #a', ['add', '#b'], '# T\n**Tags**: #a #b'],
      ['no-eol-h1.md', '# T', ['add', '#b'], '# T\n**Tags**: #b'],
      [
        'mixed.md',
        '# T\r\n**Tags**: #a\nline two\r\nline three',
        ['swap', '#a', '#b'],
        '# T\r\n**Tags**: #b\nline two\r\nline three',
      ],
    ];
    await Promise.all(files.map(([name, text]) => put(name, text)));
    const results = await Promise.all(
      files.map(([name, , [command, ...rest]]) =>
        run('tag', command as string, name, ...(rest as string[])),
      ),
    );
    for (const [i, result] of results.entries()) {
      expectSuccess(result);
      const [name, , , expected] = files[i]!;
      expect((await readFile(t.path(name))).toString('latin1')).toBe(
        Buffer.from(expected, 'utf8').toString('latin1'),
      );
    }
  });

  it('keeps the file mode', async () => {
    const modes = [0o640, 0o755];
    const names = await Promise.all(modes.map((_, i) => put(`m${i}.md`, '# T\n')));
    await Promise.all(modes.map((mode, i) => chmod(t.path(names[i] as string), mode)));
    const results = await Promise.all(names.map((name) => run('tag', 'add', name, '#x')));
    for (const [i, result] of results.entries()) {
      expectSuccess(result);
      expect(await read(names[i] as string)).toBe('# T\n**Tags**: #x\n');
      expect((await snapshot(t.path(names[i] as string))).mode.toString(8)).toBe(
        (modes[i] as number).toString(8),
      );
    }
  });

  it('edits the target of a symlink and leaves the link a link', async () => {
    await mkdir(t.path('real'));
    await put('real/target.md', '# T\n**Tags**: #delegated-x\n');
    await chmod(t.path('real/target.md'), 0o640);
    await symlink('real/target.md', t.path('link.md'));
    await symlink('link.md', t.path('link2.md'));
    expectSuccess(await run('tag', 'swap', 'link2.md', '#delegated-x', '#claimed-x'));
    expectSuccess(await run('tag', 'add', 'link.md', '#P1'));
    expect((await lstat(t.path('link.md'))).isSymbolicLink()).toBe(true);
    expect((await lstat(t.path('link2.md'))).isSymbolicLink()).toBe(true);
    expect(await readlink(t.path('link.md'))).toBe('real/target.md');
    expect(await read('real/target.md')).toBe('# T\n**Tags**: #claimed-x #P1\n');
    expect((await snapshot(t.path('real/target.md'))).mode).toBe(0o640);
    expect(await leftovers(t.path('real'))).toEqual([]);
    expectError(
      await run('tag', 'swap', 'link.md', '#delegated-x', '#claimed-x'),
      "None of '#delegated-x' found on Tags line of link.md (already claimed?)",
    );
  });
});

describe('bad input gets a clear error and changes nothing', () => {
  it('refuses invalid tags, names and line numbers', async () => {
    const name = await put('a.md', '# T\n**Tags**: #needs-x\n\nLine #needs-x\n');
    const before = await snapshot(t.path(name));
    const invalidTag = (tag: string) =>
      `Invalid tag '${tag}': expected '#' and a name of letters, digits and hyphens (e.g. '#needs-implementation')`;
    const badLine = (value: string) =>
      `Invalid line number '${value}': expected a whole number from 1 up`;
    const cases: Array<[string[], string | RegExp]> = [
      [['add', name, '#needs fix'], invalidTag('#needs fix')],
      [['add', name, '#x;rm'], invalidTag('#x;rm')],
      [['add', name, ''], invalidTag('')],
      [['add', name, '#x\n#y'], invalidTag('#x\n#y')],
      [['swap', name, '#needs-x', '#x;rm'], invalidTag('#x;rm')],
      [['swap', name, '#needs-x,#x y', '#done-x'], invalidTag('#x y')],
      [['swap', name, '#needs-x,', '#done-x'], invalidTag('')],
      [
        ['remove', name, '#needs-x', '--inline', '99'],
        'Line 99 is out of range for a.md (it has 4 lines)',
      ],
      [
        ['swap', name, '#needs-x', '#d', '--inline', '5'],
        'Line 5 is out of range for a.md (it has 4 lines)',
      ],
      [['remove', name, '#needs-x', '--inline', '0'], badLine('0')],
      [['remove', name, '#needs-x', '--inline', 'abc'], badLine('abc')],
      [['remove', name, '#needs-x', '--inline', '0x4'], badLine('0x4')],
      [['swap', name, '#needs-x', '#d', '--inline', ''], badLine('')],
      [['add', name, '#x', '--bogus'], /Unknown option --bogus/],
    ];
    const results = await Promise.all(cases.map(([args]) => run('tag', ...args)));
    for (const [i, result] of results.entries()) expectError(result, cases[i]![1]);
    await expectUntouched(t.path(name), before);
  });

  it('refuses missing files, directories, non-UTF-8, binary and oversized files', async () => {
    await mkdir(t.path('dir.md'));
    await put('latin1.md', Buffer.from('# Caf\xe9\n**Tags**: #needs-x\n', 'latin1'));
    await put('binary.md', Buffer.from('# T\n**Tags**: #needs-x\n\0\0\0', 'latin1'));
    await put('big.md', `# T\n**Tags**: #needs-x\n${'x'.repeat(1024 * 1024)}\n`);
    await symlink('nowhere.md', t.path('dangling.md'));
    const files = ['latin1.md', 'binary.md', 'big.md'];
    const before = await Promise.all(files.map((name) => snapshot(t.path(name))));
    const cases: Array<[string[], string | RegExp]> = [
      [['add', 'missing.md', '#x'], 'File not found: missing.md'],
      [['add', 'dangling.md', '#x'], 'File not found: dangling.md'],
      [['add', 'dir.md', '#x'], 'Not a regular file: dir.md'],
      [['swap', '.', '#a', '#b'], 'Not a regular file: .'],
      [['add', 'latin1.md', '#x'], 'Not a UTF-8 text file: latin1.md'],
      [['remove', 'binary.md', '#needs-x'], 'Not a UTF-8 text file: binary.md'],
      [['add', 'big.md', '#x'], /^ERROR: File too large to parse safely: big\.md \(\d+ bytes/],
    ];
    const results = await Promise.all(cases.map(([args]) => run('tag', ...args)));
    for (const [i, result] of results.entries()) expectError(result, cases[i]![1]);
    for (const [i, name] of files.entries()) await expectUntouched(t.path(name), before[i]!);
    expect(await leftovers(t.path('dir.md'))).toEqual([]);
  });
});
