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
      .demandCommand(1),
  handler: () => undefined,
};
