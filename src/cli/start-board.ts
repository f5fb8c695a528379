/**
 * The board of the project, for `engine board` and `engine run --board`: its report from the
 * project's daemon when one answers, else from the files (board/daemon-source.ts), and its cards'
 * transcript tails (board/transcript-tails.ts).
 */
import { projectActionContext } from '../actions/action-context.js';
import type { BoardServer } from '../board/board-server.js';
import type { DaemonBoardSource } from '../board/daemon-source.js';
import type { StatusQuery } from '../control/control-client.js';
import type { LogFn } from '../daemon/daemon-context.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import { messageOf } from '../errors.js';
import { hostsRemoteOf, judgeOptionsOf } from '../settings/load-settings.js';
import type { Settings } from '../settings/setting-table.js';
import { isReal } from './ask-daemon.js';
import { printLine } from './output.js';
import { readDispatchTable } from './paths.js';
import { statusPlace } from './status.js';

export interface BoardFlags {
  host: string;
  port: number;
  readOnly: boolean;
}

/** The deadline of the connection to the daemon and of each of its answers. */
const DAEMON_TIMEOUT_MS = 10_000;

/**
 * Starts the board and prints its URL; `close` ends it. `settings`: the daemon's under `engine
 * run --board`, so that the board judges and words the waits as it does. The daemon is asked
 * with the board's settings and clock, as `engine status` asks it: the same report either way.
 */
export async function startBoard(
  root: string,
  paths: string[],
  flags: BoardFlags,
  log: LogFn,
  settings: Settings,
): Promise<BoardServer> {
  const [{ startBoardServer }, tails, { transcriptTail }] = await Promise.all([
    import('../board/board-server.js'),
    import('../board/transcript-tails.js'),
    import('../transcript/transcript-text.js'),
  ]);
  // Before the source: once its watches are open, nothing may throw past their close.
  const actions = await projectActionContext(root, process.env, { log, graceMs: 10_000 });
  const source = await boardSource(root, paths, log, settings);
  const tail = new tails.TranscriptTails({
    render: transcriptTail,
    onLate: () => source.poke(),
  });
  const server = await startBoardServer({
    root,
    source,
    ...flags,
    tail: (dir) => tail.tail(dir),
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

/** The daemon's answer when one runs, else the files', as `engine status` asks and reads. */
async function boardSource(
  root: string,
  paths: string[],
  log: LogFn,
  settings: Settings,
): Promise<DaemonBoardSource> {
  const [{ collectStatus }, { fileBoardSource }, { daemonBoardSource }, { connectDaemon }] =
    await Promise.all([
      import('../status/collect-status.js'),
      import('../board/board-source.js'),
      import('../board/daemon-source.js'),
      import('../control/control-client.js'),
    ]);
  const judging = {
    options: judgeOptionsOf(settings),
    debounceMs: settings.debounceMs,
    maxAgents: settings.maxAgents,
    agingMs: settings.agingMs,
    hostsRemote: hostsRemoteOf(settings),
  };
  // With git claims, each report reads where the daemon running then reads (statusPlace).
  const place = () => statusPlace(root, paths, judging.hostsRemote !== null);
  const files = await fileBoardSource({
    root,
    paths,
    watcher: settings.watcher,
    onError: (error) => log('warn', `board watch: ${messageOf(error)}`),
    // The table is read at each report: a change to directives/TAGS.md shows at once.
    collect: async () => {
      const read = await place();
      const used = await readDispatchTable(read.tableRoot);
      return collectStatus(root, read.paths, parseDispatchTable(used.text, used.path), judging);
    },
  });
  return daemonBoardSource({
    files,
    // A path through a symlink may lead outside what the daemon watches: the files answer.
    connect: async () =>
      (await place()).paths.every(isReal)
        ? connectDaemon(root, { timeoutMs: DAEMON_TIMEOUT_MS })
        : null,
    query: async (): Promise<StatusQuery> => {
      const read = await place();
      const used = await readDispatchTable(read.tableRoot);
      const table = { text: used.text, path: used.path };
      return { paths: read.paths, table, judging: { ...judging, nowMs: Date.now() } };
    },
  });
}
