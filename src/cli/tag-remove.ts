import type { CommandModule } from 'yargs';
import { parseTag } from '../tags/tag-name.js';
import { parseLineNumber } from './arguments.js';

interface Args {
  file: string;
  tag: string;
  inline?: string;
}

export const tagRemoveCommand: CommandModule<object, Args> = {
  command: 'remove <file> <tag>',
  describe: 'Remove a tag from the Tags line (missing: no-op), or with --inline N from line N',
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', demandOption: true, describe: 'Markdown file' })
      .positional('tag', { type: 'string', demandOption: true, describe: "Tag, e.g. '#P1'" })
      .option('inline', {
        type: 'string',
        describe: 'Line N must carry the tag; remove it there',
      })
      .example("$0 tag remove sessions/fix-login.md '#P1'", 'Drop a tag from the Tags line')
      .example("$0 tag remove notes.md '#todo' --inline 12", 'Drop it from line 12') as never,
  handler: async (args) => {
    const { removeTagFromFile } = await import('../files/tag-file.js');
    await removeTagFromFile(args.file, parseTag(args.tag), parseLineNumber(args.inline));
  },
};
