import type { CommandModule } from 'yargs';

interface Args {
  file: string;
  root: string;
}

export const attachCommand: CommandModule<object, Args> = {
  command: 'attach <file>',
  describe: 'Attach to the tmux window of the agent working on a request file',
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', demandOption: true })
      .option('root', { type: 'string', default: '.' }) as never,
  // Loaded on use: the other commands do not pay for tmux and session modules.
  handler: async (args) => (await import('./attach-session.js')).attach(args),
};
