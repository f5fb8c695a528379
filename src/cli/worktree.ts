import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { carrierTags } from '../tags/edit-tags.js';
import { scanTags } from '../tags/scan-tags.js';
import { pruneWorktrees } from '../worktrees/worktree.js';
import { rootOption } from './arguments.js';
import { printLine } from './output.js';
import { projectRoot } from './project-root.js';

interface PruneArgs {
  root?: string;
}

/** Done: `#done-X`, and not claimed, approved or waiting for approval again. */
async function isFinished(requestFile: string, noun: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(requestFile, 'utf8');
  } catch {
    return false;
  }
  const tags = new Set(carrierTags(scanTags(text)).map((o) => o.tag));
  return (
    tags.has(`#done-${noun}`) &&
    !['claimed', 'delegated', 'needs'].some((state) => tags.has(`#${state}-${noun}`))
  );
}

const pruneCommand: CommandModule<object, PruneArgs> = {
  command: 'prune',
  describe:
    'Remove the worktrees and branches of done items whose branches are merged into HEAD; never one with uncommitted changes',
  builder: (yargs) =>
    yargs
      .option('root', rootOption('Project root (its .engine-worktrees/ holds the worktrees)'))
      .example('$0 worktree prune', 'Remove the merged worktrees of done items')
      .example('$0 worktree prune --root ~/work/app', 'The same, for another project') as never,
  handler: async (args) => {
    for (const outcome of await pruneWorktrees(await projectRoot(args.root), isFinished)) {
      const verb = outcome.removed ? 'removed' : 'kept';
      printLine(`${verb} ${outcome.path} (${outcome.branch}): ${outcome.reason}`);
    }
  },
};

export const worktreeCommand: CommandModule = {
  command: 'worktree <command>',
  describe: 'The git worktrees of --worktree claims',
  builder: (yargs) =>
    yargs
      .command(pruneCommand as CommandModule)
      .demandCommand(1)
      .example('$0 worktree prune', 'Remove the merged worktrees of done items')
      .example('$0 help worktree prune', 'What prune keeps'),
  handler: () => undefined,
};
