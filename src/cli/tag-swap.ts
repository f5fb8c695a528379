import type { CommandModule } from 'yargs';
import { parseTag, parseTagList } from '../tags/tag-name.js';
import { parseLineNumber } from './arguments.js';

interface Args {
  file: string;
  old: string;
  new: string;
  inline?: string;
}

export const tagSwapCommand: CommandModule<object, Args> = {
  command: 'swap <file> <old> <new>',
  describe:
    'Compare-and-swap: replace the present old tag (comma list) with the new one, atomically',
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', demandOption: true, describe: 'Markdown file' })
      .positional('old', {
        type: 'string',
        demandOption: true,
        describe: "'#old' or '#old1,#old2'",
      })
      .positional('new', {
        type: 'string',
        demandOption: true,
        describe: "The tag that replaces it, e.g. '#delegated-fix'",
      })
      .option('inline', {
        type: 'string',
        describe: 'Swap on line N instead of the Tags line',
      })
      .example(
        "$0 tag swap sessions/fix-login.md '#needs-fix' '#delegated-fix'",
        'Hand a request to the daemon, if it still needs a fix',
      )
      .example("$0 tag swap a.md '#P1,#P2' '#P0'", 'Whichever of two is there') as never,
  handler: async (args) => {
    const { swapTagInFile } = await import('../files/tag-file.js');
    await swapTagInFile(
      args.file,
      parseTagList(args.old),
      parseTag(args.new),
      parseLineNumber(args.inline),
    );
  },
};
