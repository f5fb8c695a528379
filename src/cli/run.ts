/** `engine run --monitor-tags[=LIST] [paths..]`: the dispatch daemon. */
import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { SETTING_NAMES, SETTINGS, settingFlag } from '../settings/setting-table.js';
import { numberOption, rootOption } from './arguments.js';
import { DEFAULT_BOARD_PORT, PORT_RANGE } from './board.js';
import type { RunArgs as Args } from './run-daemon.js';

export const runCommand: CommandModule<object, Args> = {
  command: 'run [args..]',
  describe: 'Run the dispatch daemon (--monitor-tags)',
  builder: (yargs) =>
    yargs
      .positional('args', {
        type: 'string',
        array: true,
        default: [],
        describe: 'Paths to watch',
      })
      .option(
        'root',
        rootOption('Project root holding directives/ (TAGS.md, engine.json) and sessions/'),
      )
      .options(
        Object.fromEntries(SETTING_NAMES.map((name) => [SETTINGS[name].flag, settingFlag(name)])),
      )
      .option('once', {
        type: 'boolean',
        default: false,
        describe: 'One pass: reap, dispatch what is ready, exit',
      })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe:
          "Print every waiting item in the order the daemon claims them, with what each still waits for; change nothing (not with --claims git: engine status shows the running daemon's order)",
      })
      .option('board', {
        type: 'boolean',
        default: false,
        describe: 'Serve the board (engine board) beside the daemon, on --board-port',
      })
      .option(
        'board-port',
        numberOption('board-port', {
          range: PORT_RANGE,
          default: DEFAULT_BOARD_PORT,
          describe: "The board's port on the loopback address; 0 picks a free one",
        }),
      )
      .option('board-host', {
        type: 'string',
        default: '127.0.0.1',
        describe: "The board's loopback address: 127.0.0.1, ::1 or localhost; any other is refused",
      })
      .option('board-read-only', {
        type: 'boolean',
        default: false,
        describe: 'The board shows, and serves no action',
      })
      .option('log-format', {
        choices: ['text', 'json'] as const,
        default: 'text' as const,
        describe: "The daemon's log lines on stderr: text, or one JSON object a line",
      })
      .option('verbose', {
        type: 'boolean',
        default: false,
        describe: 'Also log debug lines: each pass, claim judgement and watch event',
      })
      .example('$0 run --monitor-tags', 'Run the daemon: dispatch every #delegated-X item')
      .example(
        "$0 run --monitor-tags='#delegated-fix' --max-agents 2 --board",
        'Only fixes, two agents at once, with the board',
      )
      .example(
        '$0 run --monitor-tags --dry-run',
        'What it would claim, in order; change nothing',
      ) as never,
  handler: async (args) => {
    if (args['monitor-tags'] === undefined) {
      throw new EngineError('Nothing to run: use --monitor-tags to run the daemon');
    }
    const { runDaemon } = await import('./run-daemon.js');
    await runDaemon(args);
  },
};
