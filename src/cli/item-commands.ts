/** `engine cancel FILE`, `engine retry FILE`, `engine close FILE`: acting on one item. */
import type { Argv, CommandModule } from 'yargs';
import { numberOption, rootOption } from './arguments.js';
import type { ItemArgs } from './item-actions.js';

function itemOptions(yargs: Argv): Argv<ItemArgs> {
  return yargs
    .positional('file', { type: 'string', demandOption: true, describe: 'The request file' })
    .option('noun', {
      type: 'string',
      describe: 'The item, when the file carries several: the X of its #state-X tag',
    })
    .option(
      'root',
      rootOption(
        'Project root: the Session line is relative to it',
        'the request file, else the current directory',
      ),
    )
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'Print what was done as JSON',
    }) as never;
}

export const cancelCommand: CommandModule<object, ItemArgs> = {
  command: 'cancel <file>',
  describe:
    "Cancel a running item: end its agent by its recorded identity (SIGTERM, then SIGKILL after --grace) and send it to #needs-X with a Recovery entry 'cancelled'; a human's claim is never touched",
  builder: (yargs) =>
    itemOptions(yargs)
      .option(
        'grace',
        numberOption('grace', {
          // A timer's longest delay, in seconds.
          range: { min: 0, max: 2_147_483, whole: false },
          unit: 'seconds',
          default: 10,
          describe: 'Seconds from SIGTERM to SIGKILL',
        }),
      )
      .example('$0 cancel sessions/fix-login.md', 'Stop its agent; the item needs you again')
      .example(
        '$0 cancel sessions/a.md --noun review --grace 30',
        'One of its items, gently',
      ) as never,
  // Loaded on use: the other commands do not pay for the session modules.
  handler: async (args) => (await import('./item-actions.js')).cancel(args),
};

export const retryCommand: CommandModule<object, ItemArgs> = {
  command: 'retry <file>',
  describe:
    "Retry an item now: #needs-X (given up, cancelled) to #delegated-X, or a #delegated-X that a retry's Not Before holds, claimed without waiting for a backoff",
  builder: (yargs) =>
    itemOptions(yargs)
      .example('$0 retry sessions/fix-login.md', 'Give a given-up or cancelled item another run')
      .example(
        '$0 retry sessions/a.md --noun review --json',
        'One of its items; say what was done as JSON',
      ) as never,
  handler: async (args) => (await import('./item-actions.js')).retry(args),
};

export const closeCommand: CommandModule<object, ItemArgs> = {
  command: 'close <file>',
  describe:
    "Close a finished item's interactive claude agent now, by the daemon's steps (Ctrl-C at its own prompt, else SIGTERM; SIGKILL after a grace period)",
  builder: (yargs) =>
    itemOptions(yargs)
      .example(
        '$0 close sessions/fix-login.md',
        'End the finished agent now, not after --close-after-done',
      )
      .example('$0 close sessions/a.md --noun review', 'One of its items') as never,
  handler: async (args) => (await import('./item-actions.js')).close(args),
};
