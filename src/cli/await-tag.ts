import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { parseTag } from '../tags/tag-name.js';
import type { AwaitTarget } from '../watch/await-tag.js';
import { printLine, warn } from './output.js';

interface Args {
  file?: string;
  tag?: string;
  dir?: string;
  timeout?: string;
  verbose: boolean;
}

/** setTimeout's limit: a longer delay would fire at once. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const awaitTagCommand: CommandModule<object, Args> = {
  command: 'await-tag [file] [tag]',
  describe: 'Block until a file (or any markdown file under --dir) carries a tag',
  builder: (yargs) =>
    yargs
      .usage(
        '$0 await-tag <file> <#tag> [--timeout S]\n$0 await-tag --dir <path> <#tag> [--timeout S]\n\n' +
          'Block until the file carries the tag (exit 0): a lifecycle tag (#done-fix) on its Tags line\n' +
          'or front matter, the item state; any other tag anywhere outside code. The file need not exist yet.',
      )
      .positional('file', { type: 'string', describe: 'Markdown file to wait on' })
      .positional('tag', { type: 'string', describe: "Tag, e.g. '#done-fix'" })
      .option('dir', {
        type: 'string',
        describe: 'Wait for any markdown file under this directory; prints its path',
      })
      .option('timeout', {
        type: 'string',
        describe: 'Give up after S seconds (exit 1); default: wait forever',
      })
      .option('verbose', {
        type: 'boolean',
        default: false,
        describe: 'Say on stderr when the watch is ready',
      })
      .example("$0 await-tag sessions/fix-login.md '#done-fix'", 'Wait until the fix is done')
      .example(
        "$0 await-tag --dir sessions '#needs-review' --timeout 600",
        'Wait up to 10 minutes for any request to need a review',
      ) as never,
  handler: async (args) => {
    const { target, tag } = targetOf(args);
    const seconds = parseTimeout(args.timeout);
    const { awaitTag } = await import('../watch/await-tag.js');
    const result = await awaitTag({
      tag,
      target,
      timeoutMs: seconds === undefined ? undefined : seconds * 1000,
      timeoutLabel: args.timeout,
      onWarning: warn,
      onWatching: (watched) => {
        if (args.verbose) {
          const where = 'file' in target ? target.file : target.dir;
          process.stderr.write(
            `waiting for '${tag}' in ${where} (watching ${watched.join(', ')})\n`,
          );
        }
      },
    });
    if ('dir' in target) printLine(result.path);
  },
};

function targetOf(args: Args): { target: AwaitTarget; tag: string } {
  const positionals = [args.file, args.tag].filter((v): v is string => v !== undefined);
  const usage =
    "usage: engine await-tag <file> <#tag> or engine await-tag --dir <path> <#tag> (quote the tag: an unquoted '#' starts a shell comment)";
  if (args.dir !== undefined) {
    if (args.dir === '') throw new EngineError('--dir needs a directory path');
    if (positionals.length !== 1) {
      throw new EngineError(`With --dir, give only the tag; ${usage}`);
    }
    return { target: { dir: args.dir }, tag: parseTag(positionals[0] as string) };
  }
  if (positionals.length !== 2) throw new EngineError(`Name a file and a tag; ${usage}`);
  if (args.file === '') throw new EngineError('The file path is empty');
  return { target: { file: args.file as string }, tag: parseTag(args.tag as string) };
}

function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new EngineError(
      `Invalid timeout '${value}': expected a number of seconds, 0 or more (e.g. 30 or 0.5)`,
    );
  }
  if (seconds * 1000 > MAX_TIMEOUT_MS) {
    throw new EngineError(
      `Invalid timeout '${value}': at most ${Math.floor(MAX_TIMEOUT_MS / 1000)} seconds; leave it out to wait forever`,
    );
  }
  return seconds;
}
