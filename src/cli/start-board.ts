/** The board over the project's files, for `engine board` and `engine run --board`. */
import { projectActionContext } from '../actions/action-context.js';
import type { BoardServer } from '../board/board-server.js';
import type { LogFn } from '../daemon/daemon-context.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import { messageOf } from '../errors.js';
import { judgeOptionsOf } from '../settings/load-settings.js';
import type { Settings } from '../settings/setting-table.js';
import { printLine } from './output.js';
import { readDispatchTable } from './paths.js';

export interface BoardFlags {
  host: string;
  port: number;
  readOnly: boolean;
}

/**
 * Starts the board over the project's files and prints its URL; `close` ends it. `settings`: the
 * daemon's under `engine run --board`, so that the board judges and words the waits as it does.
 */
export async function startBoard(
  root: string,
  paths: string[],
  flags: BoardFlags,
  log: LogFn,
  settings: Settings,
): Promise<BoardServer> {
  const [{ collectStatus }, { fileBoardSource }, { startBoardServer }] = await Promise.all([
    import('../status/collect-status.js'),
    import('../board/board-source.js'),
    import('../board/board-server.js'),
  ]);
  // Before the source: once its watches are open, nothing may throw past their close.
  const actions = await projectActionContext(root, process.env, { log, graceMs: 10_000 });
  const source = await fileBoardSource({
    root,
    paths,
    watcher: settings.watcher,
    onError: (error) => log('warn', `board watch: ${messageOf(error)}`),
    // The table is read at each report: a change to directives/TAGS.md shows at once.
    collect: async () => {
      const used = await readDispatchTable(root);
      return collectStatus(root, paths, parseDispatchTable(used.text, used.path), {
        options: judgeOptionsOf(settings),
        debounceMs: settings.debounceMs,
        maxAgents: settings.maxAgents,
        agingMs: settings.agingMs,
      });
    },
  });
  const server = await startBoardServer({
    root,
    source,
    ...flags,
    // The transcript renderer (src/transcript/) is wired here once it lands: no tail until then.
    tail: async () => null,
    actions,
    log,
  }).catch(async (error: unknown) => {
    await source.close();
    throw error;
  });
  // The one place the token is shown: the terminal of whoever started the board.
  printLine(`Board: ${server.url}`);
  log('info', `board listening on port ${server.port}${flags.readOnly ? ' (read-only)' : ''}`);
  return {
    ...server,
    close: async () => {
      await server.close();
      await source.close();
    },
  };
}
