/**
 * `engine board`: the board (src/board/) on a loopback port, the same report as `engine status`
 * (from the project's daemon when one runs, else from the files), until SIGINT or SIGTERM. `engine run --monitor-tags --board`
 * starts the same server beside the daemon (start-board.ts, loaded on use). The URL with its token
 * is printed once, on stdout, and nowhere else.
 */
import { join, resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { numberOption, rootOption } from './arguments.js';

/** The board's port unless --port says otherwise (docs/BOARD.md). */
export const DEFAULT_BOARD_PORT = 7420;
/** A TCP port; 0 asks the kernel for a free one. */
export const PORT_RANGE = { min: 0, max: 65_535, whole: true };

interface Args {
  paths: string[];
  root?: string;
  host: string;
  port: number;
  'read-only': boolean;
}

export const boardCommand: CommandModule<object, Args> = {
  command: 'board [paths..]',
  describe:
    'Serve the board on 127.0.0.1: what needs you, what waits and why, what runs, what is done, and the actions on each item, live (docs/BOARD.md)',
  builder: (yargs) =>
    yargs
      .positional('paths', {
        type: 'string',
        array: true,
        default: [],
        describe: 'Directories of requests (default: sessions/)',
      })
      .option('root', rootOption('Project root'))
      .option(
        'port',
        numberOption('port', {
          range: PORT_RANGE,
          default: DEFAULT_BOARD_PORT,
          describe: 'Port on the loopback address; 0 picks a free one',
        }),
      )
      .option('host', {
        type: 'string',
        default: '127.0.0.1',
        describe:
          'Loopback address to listen on: 127.0.0.1, ::1 or localhost; any other is refused',
      })
      .option('read-only', {
        type: 'boolean',
        default: false,
        describe: 'Show the board, serve no action',
      })
      .example('$0 board', 'Serve the board on http://127.0.0.1:7420')
      .example('$0 board --port 0 --read-only', 'On a free port, showing only') as never,
  handler: async (args) => {
    const [{ projectRoot }, { createLogger }, { startBoard }, { loadSettings }] = await Promise.all(
      [
        import('./project-root.js'),
        import('./logger.js'),
        import('./start-board.js'),
        import('../settings/load-settings.js'),
      ],
    );
    const root = await projectRoot(args.root);
    const { settings } = await loadSettings(root, {}, process.env);
    const paths =
      args.paths.length > 0 ? args.paths.map((p) => resolve(p)) : [join(root, 'sessions')];
    const log = createLogger('text');
    const flags = {
      host: args.host,
      port: args.port,
      readOnly: args['read-only'],
    };
    const board = await startBoard(root, paths, flags, log, settings);
    await new Promise<void>((stop) => {
      process.once('SIGINT', () => stop());
      process.once('SIGTERM', () => stop());
    });
    await board.close();
  },
};
