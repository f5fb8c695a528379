import { join, resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { hostsRemoteOf, judgeOptionsOf, loadSettings } from '../settings/load-settings.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import { printLine } from './output.js';
import { rootOption } from './arguments.js';
import { readDispatchTable } from './paths.js';
import { projectRoot } from './project-root.js';
import { statusLines } from './status-lines.js';
import { readingFiles, statusTextFromDaemon } from './ask-daemon.js';
import type { StatusReport } from '../status/collect-status.js';
import type { ShownTable } from '../control/protocol.js';
import { requireGivenPaths } from './given-paths.js';
import { queuePaths, queuePlaceOf } from '../daemon/queue-place.js';

export interface StatusArgs {
  paths: string[];
  root?: string;
  json: boolean;
}

export const statusCommand: CommandModule<object, StatusArgs> = {
  command: 'status [paths..]',
  describe:
    'Whether a daemon runs, what needs you, what waits (in dispatch order, and why), what runs, what finished recently',
  builder: (yargs) =>
    yargs
      .positional('paths', {
        type: 'string',
        array: true,
        default: [],
        describe: 'Directories of requests (default: sessions/)',
      })
      .option('root', rootOption('Project root'))
      .option('json', {
        type: 'boolean',
        default: false,
        describe: 'The same sections as JSON, with absolute ISO times and nothing cut but Done',
      })
      .example('$0 status', 'What runs, waits and needs you')
      .example('$0 status --json', 'The same, for a script')
      .example('$0 status --root ~/work/app', 'Another project') as never,
  handler: async (args) => {
    await engineStatus(args);
  },
};

/**
 * Reports and prints: from the running daemon when it answers (docs/CLI.md), else from the
 * files; either way with this command's settings and clock, so the report is the same.
 */
export async function engineStatus(args: StatusArgs): Promise<void> {
  const root = await projectRoot(args.root);
  const { settings } = await loadSettings(root, {}, process.env);
  requireGivenPaths(args.paths, 'directory');
  const { paths, tableRoot } = await statusPlace(
    root,
    args.paths,
    hostsRemoteOf(settings) !== null,
  );
  const used = await readDispatchTable(tableRoot);
  const now = new Date();
  const judging = {
    options: judgeOptionsOf(settings),
    debounceMs: settings.debounceMs,
    maxAgents: settings.maxAgents,
    agingMs: settings.agingMs,
    hostsRemote: hostsRemoteOf(settings),
  };
  const shown = { path: used.path, shipped: used.shipped };
  // The daemon renders the text: the client parses no report of several MB and renders nothing.
  const text = await statusTextFromDaemon(root, {
    paths,
    table: { text: used.text, path: used.path },
    judging: { ...judging, nowMs: now.getTime() },
    json: args.json,
    shown,
  });
  if (text !== null) return printLine(text);
  readingFiles();
  const table = parseDispatchTable(used.text, used.path);
  const { collectStatus } = await import('../status/collect-status.js');
  // Claims judged, and items ordered and held, as the project's daemon does.
  const report = await collectStatus(root, paths, table, { now, ...judging });
  printLine(statusText(report, shown, args.json, now));
}

/**
 * The request paths a status reads (`given`, or sessions/) and the root of its table: with git
 * claims and a daemon running them, the same places in its checkout of the shared branch
 * (daemon/queue-place.ts), as the daemon reads them.
 */
export async function statusPlace(
  root: string,
  given: readonly string[],
  gitClaims = false,
): Promise<{ paths: string[]; tableRoot: string }> {
  // Whatever the settings say: a daemon started with --claims git reads its checkout; with
  // none running, the checkout the last one left, when the settings say git claims.
  const place = await queuePlaceOf(root, gitClaims);
  const asked = given.length > 0 ? given.map((p) => resolve(p)) : [join(root, 'sessions')];
  return { paths: queuePaths(root, place, asked), tableRoot: place?.root ?? root };
}

/**
 * What `engine status` prints, without its final newline; the daemon renders it the same way.
 * One write: a line each was a write each, 73,000 of them for a large report.
 */
export function statusText(
  report: StatusReport,
  shown: ShownTable,
  json: boolean,
  now: Date,
): string {
  return json
    ? JSON.stringify({ ...report, table: shown }, null, 2)
    : statusLines(report, shown, now).join('\n');
}
