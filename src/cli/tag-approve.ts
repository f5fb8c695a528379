import type { CommandModule } from 'yargs';
import type { ApproveArgs as Args } from './tag-approve-actions.js';

export const tagApproveCommand: CommandModule<object, Args> = {
  command: 'approve [paths..]',
  describe:
    'Approve #needs-X items: interactively, one file with --to delegated|next, or --list them',
  builder: (yargs) =>
    yargs
      .usage(
        '$0 tag approve [path...]                 walk the #needs-X items, one key each (a terminal)\n' +
          '$0 tag approve <file> --to delegated|next [--inline N]\n' +
          '$0 tag approve [path...] --list [--json]',
      )
      .positional('paths', {
        type: 'string',
        array: true,
        default: ['sessions/'],
        describe: 'Files or directories (default sessions/); with --to, one file',
      })
      .option('to', {
        type: 'string',
        describe: 'Swap every #needs-X on the Tags line (or line N) to #delegated-X or #next-X',
      })
      .option('inline', { type: 'string', describe: 'With --to: swap on line N instead' })
      .option('list', {
        type: 'boolean',
        default: false,
        describe: 'List the pending items; change nothing',
      })
      .option('json', { type: 'boolean', default: false, describe: 'With --list: JSON' })
      .example('$0 tag approve', 'Walk the items waiting for approval')
      .example('$0 tag approve sessions/fix-login.md --to delegated', 'Approve one')
      .example('$0 tag approve --list --json', 'List them, as JSON') as never,
  // The implementation (remark, the approval walk) loads only when this command runs.
  handler: async (args) => (await import('./tag-approve-actions.js')).approve(args),
};
