import type { CommandModule } from 'yargs';
import { tagAddCommand } from './tag-add.js';
import { tagApproveCommand } from './tag-approve.js';
import { tagFindCommand } from './tag-find.js';
import { tagRemoveCommand } from './tag-remove.js';
import { tagSwapCommand } from './tag-swap.js';

export const tagCommand: CommandModule = {
  command: 'tag <command>',
  describe: 'Find and edit tags in markdown files',
  builder: (yargs) =>
    yargs
      .command(tagFindCommand as CommandModule)
      .command(tagAddCommand as CommandModule)
      .command(tagRemoveCommand as CommandModule)
      .command(tagSwapCommand as CommandModule)
      .command(tagApproveCommand)
      .demandCommand(1)
      .example("$0 tag find '#needs-fix'", 'The requests that need a fix')
      .example("$0 tag swap sessions/a.md '#needs-fix' '#delegated-fix'", 'Hand one to the daemon')
      .example('$0 help tag find', 'The help of one tag command'),
  handler: () => undefined,
};
