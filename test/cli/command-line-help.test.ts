/**
 * A CLI that helps a user who types it wrong (issue 22): did-you-mean for commands, subcommands
 * and flags, `engine help CMD`, `-h` and `-v`, one hint for `engine` alone, the quoting hint for
 * a tag the shell ate, and `engine completion` run by a real bash.
 */
import { spawnSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engineCli, withoutHelpCache } from '../../src/cli/full-cli.js';
import { CLI, runProcess } from '../helpers/run-cli.js';
import { engine, expectError, makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;

const hasZsh = spawnSync('zsh', ['-c', 'true']).status === 0;

beforeEach(async () => {
  t = await makeTempDir('engine-help-');
});

afterEach(async () => {
  await t.cleanup();
});

describe('did you mean', () => {
  it.each([
    [['stauts'], "Unknown command 'stauts' (did you mean status?) (see engine --help)"],
    [['tag', 'fnd', '#x'], "Unknown command 'fnd' (did you mean find?) (see engine tag --help)"],
    [['status', '--jsn'], 'Unknown option --jsn (did you mean --json?) (see engine status --help)'],
    [
      ['tag', 'find', '#x', '--contxt'],
      'Unknown option --contxt (did you mean --context?) (see engine tag find --help)',
    ],
    [
      ['run', '--monitor-tags', '--retires', '2'],
      'Unknown option --retires (did you mean --retries?) (see engine run --help)',
    ],
    [['worktree', 'prune', '--zzz'], 'Unknown option --zzz (see engine worktree prune --help)'],
    // yargs also names the camelCase twin (jsnOut): said once, as typed.
    [['status', '--jsn-out'], 'Unknown option --jsn-out (see engine status --help)'],
    [
      ['tag', 'find', '#x', '--no-contxt'],
      'Unknown option --no-contxt (did you mean --no-context?) (see engine tag find --help)',
    ],
    // yargs reads -jsn as -j -s -n.
    [['status', '-jsn'], 'Unknown option -jsn (did you mean --json?) (see engine status --help)'],
    [['attach', 'a.md', 'b.md'], "Unexpected argument 'b.md' (see engine attach --help)"],
  ])('engine %j', async (args, message) => {
    expectError(await engine(t.dir, args), message);
  });

  it('names the commands when none is near', async () => {
    expectError(
      await engine(t.dir, ['xyzzy']),
      /^ERROR: Unknown command 'xyzzy'; the commands here: init, new, tag, await-tag, run, /,
    );
  });
});

describe('a command line without a command', () => {
  it.each([[[]], [['tag']], [['worktree']]])('engine %j: its help, then one hint', async (args) => {
    const result = await engine(t.dir, args);
    const help = await engine(t.dir, [...args, '--help']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`${help.stdout}ERROR: Name a command (listed above)\n`);
  });
});

describe('a tag the shell took for a comment', () => {
  it('engine tag find with no query hints at quoting', async () => {
    expectError(
      await engine(t.dir, ['tag', 'find']),
      "engine tag find: missing <pattern>; did the shell take # as a comment? Quote tags: engine tag find '#needs-fix'",
    );
  });

  it('engine tag swap missing its new tag hints at quoting', async () => {
    expectError(
      await engine(t.dir, ['tag', 'swap', 'a.md', '#needs-x']),
      "engine tag swap: missing <new>; did the shell take # as a comment? Quote tags: engine tag swap <file> '#needs-fix' '#delegated-fix'",
    );
  });

  it('a missing file is no quoting matter', async () => {
    expectError(
      await engine(t.dir, ['attach']),
      'engine attach: missing <file> (see engine attach --help)',
    );
  });
});

describe('help', () => {
  it.each([[['tag', 'find']], [['run']], [['worktree', 'prune']], [[]]])(
    'engine help %j prints what --help prints',
    async (words) => {
      const help = await engine(t.dir, ['help', ...words]);
      const flag = await engine(t.dir, [...words, '--help']);
      expect(flag.code).toBe(0);
      expect(help).toEqual(flag);
    },
  );

  it('-h works where positionals are missing', async () => {
    const result = await engine(t.dir, ['tag', 'find', '-h']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^engine tag find <pattern>/);
  });

  it.each([
    [['tag', 'fnd'], "Unknown command 'fnd' (did you mean find?)"],
    [['stauts'], "Unknown command 'stauts' (did you mean status?)"],
    [['status', 'x'], "engine status has no subcommand 'x' (see engine status --help)"],
  ])('engine help %j names the command it does not know', async (words, message) => {
    expectError(await engine(t.dir, ['help', ...words]), message);
  });

  it("renders no help text when a command's handler runs (yargs would, for a later failure)", async () => {
    // `engine help tag`: its handler prints the help of `engine tag`.
    const cli = withoutHelpCache(engineCli(['help', 'tag']));
    expect(await cli.parseAsync()).toMatchObject({ command: ['tag'] });
    const internal = cli as unknown as {
      getInternalMethods(): { getUsageInstance(): { hasCachedHelpMessage(): boolean } };
    };
    expect(internal.getInternalMethods().getUsageInstance().hasCachedHelpMessage()).toBe(false);
  });

  it('engine run says what a handler says, and shows no help', async () => {
    expectError(
      await engine(t.dir, ['run']),
      'Nothing to run: use --monitor-tags to run the daemon',
    );
  });

  it('-v is --version', async () => {
    const short = await engine(t.dir, ['-v']);
    expect(short).toEqual(await engine(t.dir, ['--version']));
    expect(short.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe('engine completion', () => {
  /** COMPREPLY of the bash script's function for the command line `words` (the last is typed). */
  /** An `engine` program in the temporary directory, for the scripts to call. */
  async function putEngineOnPath(): Promise<void> {
    const bin = t.path('engine');
    await writeFile(bin, `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`);
    await chmod(bin, 0o755);
  }

  async function bashCompletions(words: string[]): Promise<string[]> {
    await putEngineOnPath();
    const script = await engine(t.dir, ['completion', 'bash']);
    await writeFile(t.path('completion.bash'), script.stdout);
    const line = words.map((w) => `'${w}'`).join(' ');
    const result = await runProcess(
      'bash',
      [
        '-c',
        `source completion.bash; COMP_WORDS=(engine ${line}); COMP_CWORD=${words.length}; _engine_yargs_completions; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { cwd: t.dir, env: { ...process.env, PATH: `${t.dir}:${process.env.PATH ?? ''}` } },
    );
    expect(result.stderr).toBe('');
    return result.stdout.split('\n').filter((l) => l !== '');
  }

  it('bash completes commands, subcommands and flags', async () => {
    expect(await bashCompletions(['sta'])).toEqual(['status']);
    expect(await bashCompletions(['tag', 'f'])).toEqual(['find']);
    expect(await bashCompletions(['tag', 'find', '--con'])).toEqual(['--context']);
  });

  it.skipIf(!hasZsh)('zsh completes subcommands with its script, in a real zsh', async () => {
    await putEngineOnPath();
    const script = await engine(t.dir, ['completion', 'zsh']);
    await writeFile(t.path('completion.zsh'), script.stdout);
    // _describe, zsh's own, shows the answers in a completion widget: here it prints them.
    const result = await runProcess(
      'zsh',
      [
        '-f',
        '-c',
        'autoload -U compinit; compinit -u -D; source ./completion.zsh; _describe() { print -l -- "${reply[@]}" }; words=(engine tag f); CURRENT=3; BUFFER="engine tag f"; CURSOR=12; _engine_yargs_completions',
      ],
      {
        cwd: t.dir,
        env: { ...process.env, PATH: `${t.dir}:${process.env.PATH ?? ''}`, SHELL: '/bin/zsh' },
      },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^find:List files carrying a tag/m);
    expect(result.stdout).toMatch(/^approve:/m);
  });

  it('zsh gets its own script, and completions with descriptions', async () => {
    const script = await engine(t.dir, ['completion', 'zsh']);
    expect(script.code).toBe(0);
    expect(script.stdout).toContain('compdef _engine_yargs_completions engine');
    const answers = await engine(t.dir, ['--get-yargs-completions', 'engine', 'tag', ''], {
      SHELL: '/bin/zsh',
    });
    expect(answers.stdout).toContain('find:List files carrying a tag');
  });

  it('a shell it has no script for is refused', async () => {
    const result = await engine(t.dir, ['completion', 'fish']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Choices: "bash", "zsh"/);
  });
});
