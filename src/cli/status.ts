import { join, resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { judgeOptionsOf, loadSettings } from '../settings/load-settings.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import type { PrintResult } from '../sessions/session-state.js';
import type { ClaimItem } from '../status/collect-status.js';
import { agentStateText } from './agent-state-line.js';
import { printJson, printLine } from './output.js';
import { rootOption } from './arguments.js';
import { readDispatchTable } from './paths.js';
import { projectRoot } from './project-root.js';
import { waitText } from './wait-line.js';

interface Args {
  paths: string[];
  root?: string;
  json: boolean;
}

export const statusCommand: CommandModule<object, Args> = {
  command: 'status [paths..]',
  describe: 'What waits (in dispatch order), what runs, what is stale, what finished recently',
  builder: (yargs) =>
    yargs
      .positional('paths', { type: 'string', array: true, default: [] })
      .option('root', rootOption('Project root'))
      .option('json', { type: 'boolean', default: false }) as never,
  handler: async (args) => {
    const root = await projectRoot(args.root);
    const { settings } = await loadSettings(root, {}, process.env);
    const used = await readDispatchTable(root);
    const table = parseDispatchTable(used.text, used.path);
    const paths =
      args.paths.length > 0 ? args.paths.map((p) => resolve(p)) : [join(root, 'sessions')];
    const { collectStatus } = await import('../status/collect-status.js');
    // Claims judged, and items found ready, as the project's daemon does.
    const report = await collectStatus(root, paths, table, {
      options: judgeOptionsOf(settings),
      debounceMs: settings.debounceMs,
    });
    if (args.json)
      return printJson({ ...report, table: { path: used.path, shipped: used.shipped } });
    printLine(
      `Project ${root}, §TAG_DISPATCH from ${used.path}${used.shipped ? ' (shipped with engine: the project has no directives/TAGS.md)' : ''}`,
    );
    if (report.paused) {
      const probe = report.paused.probe ? `; probe ${report.paused.probe.file}` : '';
      printLine(
        `Paused until ${report.paused.until}: ${report.paused.reason}${probe} (engine resume lifts it)`,
      );
    }
    printLine(`Waiting (${report.waiting.length}), in dispatch order:`);
    report.waiting.forEach((w, i) =>
      printLine(
        `  ${i + 1}. ${w.file}  #delegated-${w.noun}  ${w.skill ?? '(no route)'}  P${w.weight}${w.dispatchable ? '' : '  not dispatchable'}${waitText(w.wait)}`,
      ),
    );
    if (report.notDispatched.length > 0) {
      printLine(`Not dispatched (${report.notDispatched.length}):`);
      report.notDispatched.forEach((n) => printLine(`  ${n.file}: ${n.reason}`));
    }
    printLine(`Running (${report.running.length}):`);
    report.running.forEach((c) => printLine(`  ${claimLine(c)}`));
    printLine(`Stale (${report.stale.length}):`);
    report.stale.forEach((c) => printLine(`  ${claimLine(c)}`));
    printLine(`Finished in the last 24 h (${report.recent.length}):`);
    report.recent.forEach((e) =>
      printLine(
        `  ${e.time}  ${e.event}  ${e.file ?? ''}${e.reason ? `  (${e.reason})` : ''}${outcome(e.result)}${resume(e.agentSessionId)}`,
      ),
    );
  },
};

function claimLine(c: ClaimItem): string {
  const age = c.ageSeconds === null ? '' : `  age ${c.ageSeconds}s`;
  const beat = c.lastHeartbeat ? `  heartbeat ${c.lastHeartbeat}` : '';
  return `${c.file}  #claimed-${c.noun}  pid ${c.pid ?? '-'} (${c.liveness})  window ${c.pane ?? '-'}${age}${beat}  ${c.session ?? ''}${resume(c.agentSessionId)}${agentStateText(c.agentState)}`;
}

/** How to reopen the agent's conversation, from the root. */
function resume(agentSessionId: string | null): string {
  return agentSessionId === null ? '' : `  agent session ${agentSessionId}`;
}

/** A print run's cost and turns, and how it ended when not `completed`. */
function outcome(result: PrintResult | null): string {
  if (result === null) return '';
  const cost = result.costUsd === null ? '' : `  cost $${result.costUsd.toFixed(4)}`;
  const turns = result.numTurns === null ? '' : `  ${result.numTurns} turns`;
  const ended =
    result.terminalReason === null || result.terminalReason === 'completed'
      ? ''
      : `  ended ${result.terminalReason}${result.apiErrorStatus === null ? '' : ` (${result.apiErrorStatus})`}`;
  return `${cost}${turns}${ended}`;
}
