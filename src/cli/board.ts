/**
 * `engine board`: the board (src/board/) on a loopback port, the same report as `engine status`
 * (from the project's daemon when one runs, else from the files), until SIGINT or SIGTERM. `engine run --monitor-tags --board`
 * starts the same server beside the daemon (start-board.ts, loaded on use). The URL with its token
 * is printed once, on stdout, and nowhere else.
 */
import { join, resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { rootOption } from './arguments.js';

/** The board's port unless --port says otherwise (docs/BOARD.md). */
export const DEFAULT_BOARD_PORT = 7420;

interface Args {
  paths: string[];
  root?: string;
  host: string;
  port: number;
  'read-only': boolean;
}

/** A port number as given: 0 (any free port) to 65535. */
export function checkPort(port: number, flag: string): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new EngineError(
      `${flag} ${String(port)}: expected a port number, 0 (any free one) to 65535`,
    );
  return port;
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
      .option('port', {
        type: 'number',
        default: DEFAULT_BOARD_PORT,
        describe: 'Port on the loopback address; 0 picks a free one',
      })
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
      }) as never,
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
      port: checkPort(args.port, '--port'),
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
