import type { CommandModule } from 'yargs';
import { removePause } from '../sessions/limit-pause.js';
import { rootOption } from './arguments.js';
import { printLine } from './output.js';
import { projectRoot } from './project-root.js';

interface Args {
  root?: string;
}

export const resumeCommand: CommandModule<object, Args> = {
  command: 'resume',
  describe:
    'Lift the queue-wide pause a usage limit set (sessions/.engine/pause.json): new claims start again at once',
  builder: (yargs) =>
    yargs
      .option('root', rootOption('Project root'))
      .example('$0 resume', 'Start claiming again now, not when the limit lifts')
      .example('$0 resume --root ~/work/app', 'The same, for another project') as never,
  handler: async (args) => {
    // The running daemon sees the file gone at its next look, records limit-lifted and goes on.
    const lifted = await removePause(await projectRoot(args.root));
    printLine(
      lifted === null
        ? 'The queue is not paused.'
        : `Lifted the pause until ${lifted.until} (${lifted.reason}).`,
    );
  },
};
