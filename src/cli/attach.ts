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
      .positional('file', {
        type: 'string',
        demandOption: true,
        describe: "A request file whose agent runs (its Session line names the agent's session)",
      })
      .option(
        'root',
        rootOption(
          "Project root: the request's Session line is relative to it",
          'the request file, else the current directory',
        ),
      )
      .example(
        '$0 attach sessions/fix-login.md',
        "Watch and type into the request's agent (tmux; detach with Ctrl-b d)",
      )
      .example(
        '$0 attach sessions/fix-login.md --root ~/work/app',
        'The same, for a project found elsewhere',
      ) as never,
  // Loaded on use: the other commands do not pay for tmux and session modules.
  handler: async (args) => (await import('./attach-session.js')).attach(args),
};
