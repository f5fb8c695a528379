import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';

export const awaitTagCommand: CommandModule = {
  command: 'await-tag [file] [tag]',
  describe: 'Block until a file (or any file under --dir) carries a tag',
  handler: () => {
    throw new EngineError('engine await-tag is not built yet');
  },
};
