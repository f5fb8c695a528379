import { join, resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { judgeOptionsOf, loadSettings } from '../settings/load-settings.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import { printJson, printLine } from './output.js';
import { rootOption } from './arguments.js';
import { readDispatchTable } from './paths.js';
import { projectRoot } from './project-root.js';
import { statusLines } from './status-lines.js';

interface Args {
  paths: string[];
  root?: string;
  json: boolean;
}

export const statusCommand: CommandModule<object, Args> = {
  command: 'status [paths..]',
  describe:
    'Whether a daemon runs, what needs you, what waits (in dispatch order, and why), what runs, what finished recently',
  builder: (yargs) =>
    yargs
      .positional('paths', { type: 'string', array: true, default: [] })
      .option('root', rootOption('Project root'))
      .option('json', {
        type: 'boolean',
        default: false,
        describe: 'The same sections as JSON, with absolute ISO times and nothing cut but Done',
      }) as never,
  handler: async (args) => {
    const root = await projectRoot(args.root);
    const { settings } = await loadSettings(root, {}, process.env);
    const used = await readDispatchTable(root);
    const table = parseDispatchTable(used.text, used.path);
    const paths =
      args.paths.length > 0 ? args.paths.map((p) => resolve(p)) : [join(root, 'sessions')];
    const { collectStatus } = await import('../status/collect-status.js');
    const now = new Date();
    // Claims judged, and items ordered and held, as the project's daemon does.
    const report = await collectStatus(root, paths, table, {
      now,
      options: judgeOptionsOf(settings),
      debounceMs: settings.debounceMs,
      maxAgents: settings.maxAgents,
      agingMs: settings.agingMs,
    });
    const shown = { path: used.path, shipped: used.shipped };
    if (args.json) return printJson({ ...report, table: shown });
    statusLines(report, shown, now).forEach((line) => printLine(line));
  },
};
