import type { CommandModule } from 'yargs';
import { rootOption } from './arguments.js';

interface Args {
  target: string;
  root?: string;
  follow: boolean;
}

export const logsCommand: CommandModule<object, Args> = {
  command: 'logs <target>',
  describe:
    "Print an agent's transcript (agent.log): of a request file's latest attempt, or of a session directory",
  builder: (yargs) =>
    yargs
      .positional('target', {
        type: 'string',
        demandOption: true,
        describe: 'A request file, or a session directory',
      })
      .option(
        'root',
        rootOption(
          "Project root: a request's Session line is relative to it",
          'the request file or session directory, else the current directory',
        ),
      )
      .option('follow', {
        alias: 'f',
        type: 'boolean',
        default: false,
        describe: 'Keep printing what the agent writes until its session ends',
      }) as never,
  // Loaded on use: the other commands do not pay for the session modules.
  handler: async (args) => (await import('./show-logs.js')).showLogs(args),
};
