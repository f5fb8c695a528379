import type { CommandModule } from 'yargs';
import { parseTag } from '../tags/tag-name.js';

interface Args {
  file: string;
  tag: string;
}

export const tagAddCommand: CommandModule<object, Args> = {
  command: 'add <file> <tag>',
  describe:
    "Append a tag to the file's Tags line (creating the line after the H1); idempotent. A second lifecycle state of a noun is refused: swap it",
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', demandOption: true, describe: 'Markdown file' })
      .positional('tag', {
        type: 'string',
        demandOption: true,
        describe: "Tag, e.g. '#needs-fix'",
      })
      .example("$0 tag add sessions/fix-login.md '#needs-fix'", 'Ask for a fix')
      .example("$0 tag add notes.md '#P1'", 'Any tag: a priority'),
  handler: async (args) => {
    const { addTagToFile } = await import('../files/tag-file.js');
    await addTagToFile(args.file, parseTag(args.tag));
  },
};
