import type { CommandModule } from 'yargs';
import { rootOption } from './arguments.js';

interface Args {
  target: string;
  root?: string;
  follow: boolean;
  raw: boolean;
}

export const logsCommand: CommandModule<object, Args> = {
  command: 'logs <target>',
  describe:
    "Print an agent's transcript (agent.log) as text: what an interactive agent's screen showed, or a claude-print run's conversation; of a request file's latest attempt, or of a session directory",
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
        describe:
          "Keep printing until the session ends: a screen's rows as they scroll off, and the last screen at the end",
      })
      .option('raw', {
        type: 'boolean',
        default: false,
        describe:
          'Print the transcript byte for byte, as recorded (escape sequences included: they act on a terminal)',
      })
      .example('$0 logs sessions/fix-login.md', "The request's latest agent transcript")
      .example('$0 logs -f sessions/fix-login.md', 'Follow it until the session ends')
      .example(
        '$0 logs sessions/.engine/sessions/fix-login-1 --raw | less -R',
        'One session, as recorded',
      ) as never,
  // Loaded on use: the other commands do not pay for the session modules.
  handler: async (args) => (await import('./show-logs.js')).showLogs(args),
};
