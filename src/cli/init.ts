/** `engine init [--root DIR] [--dry-run] [--worktree] [--upgrade]`: scaffold a project for dispatch. */
import { resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import type { InitStep } from '../init/init-project.js';
import { printLine, warn } from './output.js';
import { SHIPPED_TAGS } from './paths.js';

interface Args {
  root: string;
  'dry-run': boolean;
  worktree: boolean;
  upgrade: boolean;
}

export const initCommand: CommandModule<object, Args> = {
  command: 'init',
  describe:
    'Scaffold a project for dispatch: directives/TAGS.md, directives/engine.json, sessions/, a Claude Code command per skill, .gitignore lines; never overwrites',
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
        describe: 'List what would be written (with --upgrade: and the diffs); write nothing',
      })
      .option('worktree', {
        type: 'boolean',
        default: false,
        describe:
          'Claims run in git worktrees: engine.json gets "worktree": true and the commands tell the agent to commit on its branch (also on when engine.json says so)',
      })
      .option('upgrade', {
        type: 'boolean',
        default: false,
        describe:
          'Replace the files init wrote earlier and you did not edit with this version, showing each diff; name the edited ones',
      })
      .example('$0 init', 'scaffold the current directory')
      .example('$0 init --worktree', 'each agent commits on a branch of its own')
      .example('$0 init --upgrade --dry-run', 'show what an upgrade would change') as never,
  handler: async (args) => {
    const { initProject, worktreeSetting } = await import('../init/init-project.js');
    const root = resolve(args.root);
    const options = {
      dryRun: args['dry-run'],
      worktree: args.worktree || (await worktreeSetting(root)),
      shippedTagsPath: SHIPPED_TAGS,
      onStep: printStep,
      onSkip: (skill: string, reason: string) => warn(`no command for skill '${skill}': ${reason}`),
    };
    if (args.upgrade) {
      const { upgradeProject } = await import('../init/upgrade-project.js');
      return upgradeSummary(root, await upgradeProject(root, options), args['dry-run']);
    }
    const steps = await initProject(root, options);
    if (args['dry-run']) printLine(`Dry run in ${root}: nothing written.`);
    else if (steps.every((step) => step.action === 'kept'))
      printLine(`Everything exists in ${root}: nothing written.`);
    else printLine(`Initialized ${root}.`);
  },
};

function printStep(step: InitStep): void {
  if (step.action === 'kept' && step.note === undefined) printLine(`kept ${step.path} (exists)`);
  else if (step.action === 'edited') printLine(`left alone ${step.path}: ${step.note}`);
  else printLine(`${step.action} ${step.path}${step.note === undefined ? '' : `: ${step.note}`}`);
  if (step.diff !== undefined) printLine(step.diff.trimEnd());
}

function upgradeSummary(root: string, steps: InitStep[], dryRun: boolean): void {
  if (steps.some((step) => step.action === 'edited' && step.diff !== undefined))
    printLine(
      'A file left alone shows above the change it did not get. To take it: move your file aside, run engine init --upgrade, then bring your edits back.',
    );
  if (dryRun) printLine(`Dry run in ${root}: nothing written.`);
  else printLine(`Upgraded ${root}.`);
}
