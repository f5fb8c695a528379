import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';

export const tagApproveCommand: CommandModule = {
  command: 'approve [paths..]',
  describe: 'Approve #needs-X items: interactively, or one file with --to delegated|next',
  handler: () => {
    throw new EngineError('engine tag approve is not built yet');
  },
};
