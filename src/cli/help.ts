/** `engine help [command..]`: the help of a command, as `engine <command..> --help` prints it. */
import type { Argv, CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { commandPath } from './command-line-errors.js';
import { nearestName } from './nearest-name.js';
import { printLine } from './output.js';

interface Args {
  command: string[];
}

/** The help command of the CLI `cli` builds (passed in: the CLI module registers this one). */
export function helpCommand(cli: (argv: string[]) => Argv): CommandModule<object, Args> {
  return {
    command: 'help [command..]',
    describe: 'Show the help of a command (engine help tag find), or of engine',
    builder: (yargs) =>
      yargs
        .positional('command', {
          type: 'string',
          array: true,
          default: [],
          describe: 'The command and its subcommands',
        })
        .example('$0 help', 'The commands and the global options')
        .example('$0 help run', "The daemon's options")
        .example('$0 help tag find', 'The options of one subcommand') as never,
    handler: async (args) => {
      printLine(await helpOf(cli, args.command));
    },
  };
}

/**
 * The help text of the command `words` name. yargs answers `--help` with the help of the last
 * command it knows, so a word it did not know is found here: the help reached a shorter command.
 */
async function helpOf(cli: (argv: string[]) => Argv, words: string[]): Promise<string> {
  const argv = [...words, '--help'];
  const output = await new Promise<string>((resolve, reject) => {
    void cli(argv).parse(argv, {}, (error, _parsed, text) => {
      if (error) reject(error);
      else resolve(text);
    });
  });
  const lines = output.split('\n');
  const reached = commandPath((lines[0] ?? '').split(' ').slice(1));
  const word = words[reached.length];
  if (word === undefined) return output.trimEnd();
  const prefix = `  ${['engine', ...reached].join(' ')} `;
  const start = lines.indexOf('Commands:');
  const end = lines.indexOf('', start);
  const names = (start === -1 ? [] : lines.slice(start + 1, end === -1 ? undefined : end))
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length).split(' ')[0] ?? '');
  const near = nearestName(word, names);
  const where = ['engine', ...reached].join(' ');
  throw new EngineError(
    names.length === 0
      ? `${where} has no subcommand '${word}' (see ${where} --help)`
      : `Unknown command '${word}'${near === null ? `; the commands of ${where}: ${names.join(', ')}` : ` (did you mean ${near}?)`}`,
  );
}
