/** `engine init [--root DIR] [--dry-run]`: scaffold a project for dispatch. */
import { resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import type { InitStep } from '../init/init-project.js';
import { printLine, warn } from './output.js';
import { SHIPPED_TAGS } from './paths.js';

interface Args {
  root: string;
  'dry-run': boolean;
}

export const initCommand: CommandModule<object, Args> = {
  command: 'init',
  describe:
    'Scaffold a project for dispatch: directives/TAGS.md, directives/engine.json, sessions/, a Claude Code command per skill; never overwrites',
  builder: (yargs) =>
    yargs
      .option('root', {
        type: 'string',
        default: '.',
        describe: 'Project root to scaffold (made if missing)',
      })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe: 'List what would be written; write nothing',
      })
      .example('$0 init', 'Make the current directory an engine project')
      .example('$0 init --root ~/work/app', 'Make another directory one')
      .example('$0 init --dry-run', 'What it would write, writing nothing') as never,
  handler: async (args) => {
    const { initProject } = await import('../init/init-project.js');
    const root = resolve(args.root);
    const steps = await initProject(root, {
      dryRun: args['dry-run'],
      shippedTagsPath: SHIPPED_TAGS,
      onStep: (step: InitStep) =>
        printLine(`${step.action} ${step.path}${step.action === 'kept' ? ' (exists)' : ''}`),
      onSkip: (skill, reason) => warn(`no command for skill '${skill}': ${reason}`),
    });
    if (args['dry-run']) printLine(`Dry run in ${root}: nothing written.`);
    else if (steps.every((step) => step.action === 'kept'))
      printLine(`Everything exists in ${root}: nothing written.`);
    else printLine(`Initialized ${root}.`);
  },
};
