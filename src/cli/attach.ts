import type { CommandModule } from 'yargs';
import { rootOption } from './arguments.js';

interface Args {
  file: string;
  root?: string;
}

export const attachCommand: CommandModule<object, Args> = {
  command: 'attach <file>',
  describe:
    "Attach to the tmux window of the agent working on a request file; exits non-zero when there is none to attach to, with tmux's exit code when tmux fails",
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', demandOption: true })
      .option(
        'root',
        rootOption(
          "Project root: the request's Session line is relative to it",
          'the request file, else the current directory',
        ),
      ) as never,
  // Loaded on use: the other commands do not pay for tmux and session modules.
  handler: async (args) => (await import('./attach-session.js')).attach(args),
};
