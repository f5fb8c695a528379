/**
 * Every command's help is complete: it describes every option and positional, and gives 2 or 3
 * examples. The commands are walked from `engine --help` down, so a command added later is
 * checked without naming it here.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

/** The lines of a help text's `title:` section, up to the next blank line. */
function section(help: string, title: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${title}:`);
  if (start === -1) return [];
  const end = lines.findIndex((line, i) => i > start && line === '');
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** The subcommands' paths in a help text: `tag find` of `  engine tag find <pattern>  ...`. */
function subcommands(help: string): string[][] {
  return section(help, 'Commands').map((line) => {
    // Two spaces or more part the command from its description.
    const words = (line.trim().split(/\s{2,}/)[0] ?? '').split(' ').slice(1);
    const end = words.findIndex((w) => /^[<[]/.test(w));
    return words.slice(0, end === -1 ? words.length : end).filter((w) => w !== '');
  });
}

/** Options and positionals shown with no description: the line goes from its name to `[type]`. */
function undescribed(help: string): string[] {
  return [...section(help, 'Options'), ...section(help, 'Positionals')]
    .map((line) => /^\s+(?:-\w, )?(-{0,2}[\w-]+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[2]!.startsWith('['))
    .map((m) => m[1]!);
}

async function helpOf(path: string[]): Promise<string> {
  const result = await runCli([...path, '--help']);
  expect(result.code, `engine ${path.join(' ')} --help`).toBe(0);
  return result.stdout;
}

describe('every command helps', () => {
  it('describes every option and gives 2 or 3 examples, walking the whole command tree', async () => {
    const problems: string[] = [];
    const seen: string[] = [];
    const queue: string[][] = [[]];
    while (queue.length > 0) {
      const path = queue.shift()!;
      if (seen.includes(path.join(' '))) continue;
      seen.push(path.join(' '));
      const help = await helpOf(path);
      const name = ['engine', ...path].join(' ');
      for (const option of undescribed(help))
        problems.push(`${name}: ${option} has no description`);
      const examples = section(help, 'Examples').length;
      if (examples < 2 || examples > 3) problems.push(`${name}: ${examples} examples`);
      queue.push(...subcommands(help).filter((sub) => sub.length > path.length));
    }
    expect(problems).toEqual([]);
    // The walk reached the nested commands, and knows the ones this test was written with.
    expect(seen).toEqual(
      expect.arrayContaining(['tag find', 'tag approve', 'worktree prune', 'run']),
    );
  }, 240_000);

  it('finds an option without a description, and a command without examples', () => {
    const help = [
      'engine x',
      '',
      'Positionals:',
      '  file  The file  [string]',
      '  tag  [string]',
      '',
      'Options:',
      '      --json     [boolean]',
      '  -f, --follow   Follow  [boolean]',
      '',
    ].join('\n');
    expect(undescribed(help)).toEqual(['--json', 'tag']);
    expect(section(help, 'Examples')).toEqual([]);
  });
});
