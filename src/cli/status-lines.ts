/**
 * `engine status` for a human: the report's sections in order (the daemon and any pause, what
 * needs you, what waits and why, what runs, what finished), with relative times, paths relative
 * to the root, every line within WIDTH columns, and every cut list saying how many more.
 */
import type { PrintResult } from '../sessions/session-state.js';
import type { ClaimItem, DoneItem, StatusReport, WaitingItem } from '../status/collect-status.js';
import { queueFile, queueText } from '../status/queue-source.js';
import type { NeedsYou } from '../status/needs-you.js';
import { agentStateText } from '../status/agent-state-text.js';
import { duration, relativeTime, shortPath, wrap } from './fit-width.js';
import { waitText } from '../status/wait-text.js';
import { claimViewLines } from './claim-lines.js';

/** The waiting items listed; the rest are counted (`--json` lists them all). */
export const WAITING_SHOWN = 20;

interface View {
  root: string;
  now: Date;
  path(file: string): string;
  at(iso: string): string;
}

/**
 * The lines of each frozen item that needs you or is next, rendered once: the daemon keeps each
 * unchanged file's findings frozen (control/status-cache.ts), so that a status at 50,000 files
 * renders only what changed and what the clock moves (an agent waiting for input). Keyed by the
 * item itself, which cannot change, and checked against the root its paths are shown from.
 */
const rendered = new WeakMap<object, { root: string; lines: string[] }>();

/** `render(item)`, once per frozen item and root (`view.root`). */
export function linesOnce<T extends object>(
  item: T,
  view: { root: string },
  render: (item: T) => string[],
): string[] {
  if (!Object.isFrozen(item)) return render(item);
  const kept = rendered.get(item);
  if (kept?.root === view.root) return kept.lines;
  const lines = render(item);
  rendered.set(item, { root: view.root, lines });
  return lines;
}

export function statusLines(
  report: StatusReport,
  table: { path: string; shipped: boolean },
  now: Date,
): string[] {
  const view: View = {
    root: report.root,
    now,
    path: (file) => shortPath(report.root, queueFile(report.queue, report.root, file)),
    at: (iso) => relativeTime(iso, now),
  };
  const shipped = table.shipped
    ? ' (shipped with engine: the project has no directives/TAGS.md)'
    : '';
  return [
    ...wrap(`Project ${report.root}`, '', '  '),
    ...wrap(`§TAG_DISPATCH from ${view.path(table.path)}${shipped}`, '', '  '),
    // Requests elsewhere are not seen: an empty list says where it looked.
    ...wrap(
      `Requests read under ${report.paths.map((p) => `${view.path(p)}/`).join(', ')}`,
      '',
      '  ',
    ),
    ...(report.queue ? wrap(queueText(report.queue), '', '  ') : []),
    ...daemonLines(report, view),
    ...section(`Needs you (${report.needsYou.length}):`, report.needsYou, 0, (n) =>
      // An agent's question is shown with its age: rendered each time.
      n.kind === 'input' ? needLines(n, view) : linesOnce(n, view, (need) => needLines(need, view)),
    ),
    ...waitingLines(report.waiting, view, report.daemon.state !== 'none'),
    ...section(`Next (${report.next.length}), for the next skill to claim:`, report.next, 0, (n) =>
      linesOnce(n, view, (next) => [
        ...wrap(`${view.path(next.file)}  ${next.tag}`, '  ', '    '),
        ...wrap(next.title, '    ', '    '),
      ]),
    ),
    ...section(`Running (${report.running.length}):`, report.running, 0, (c) =>
      claimLines(c, view),
    ),
    ...section(`Stale (${report.stale.length}):`, report.stale, 0, (c) => claimLines(c, view)),
    ...hostsLines(report, view),
    ...section(
      `Done in the last 24 h (${report.done.length + report.doneMore}), most recent first:`,
      report.done,
      report.doneMore,
      (e) => doneLines(e, view),
    ),
  ];
}

/** A section: its heading, each item's lines, and how many more were cut (`where` they are). */
function section<T>(
  heading: string,
  items: readonly T[],
  more: number,
  lines: (item: T) => string[],
  where = '',
) {
  return [heading, ...items.flatMap(lines), ...(more > 0 ? [`  … and ${more} more${where}`] : [])];
}

function daemonLines({ daemon, paused, hosts }: StatusReport, view: View): string[] {
  const since = daemon.since === null ? '' : `, since ${view.at(daemon.since)}`;
  // With git claims, daemons of other hosts dispatch from the shared branch: nothing here does.
  const none =
    hosts === undefined
      ? 'Daemon: none runs on this root, so nothing is dispatched (engine run starts one)'
      : `Daemon: none runs on this root; with git claims, daemons on other hosts dispatch from the shared branch (their claims below)`;
  const text =
    daemon.state === 'running'
      ? `Daemon: pid ${daemon.pid} on host ${daemon.host}${since}`
      : daemon.state === 'other-host'
        ? `Daemon: pid ${daemon.pid} on host ${daemon.host} holds the lock${since}; whether it runs cannot be told from this host`
        : `${none}${daemon.stalePid === null ? '' : `; its lock names pid ${daemon.stalePid}, which is gone`}`;
  const lines = wrap(text, '', '  ');
  if (paused) {
    const until = Date.parse(paused.until) > view.now.getTime();
    const probe = paused.probe ? `; probe ${view.path(paused.probe.file)}` : '';
    const state = until
      ? `lifts ${view.at(paused.until)}`
      : 'ran out: lifted once its probe is judged';
    lines.push(
      ...wrap(`Paused (${state}): ${paused.reason}${probe}; engine resume lifts it`, '', '  '),
    );
  }
  return lines;
}

/** Every host's claims, with `"claims": "git"` only: as last fetched, and when. */
function hostsLines({ hosts }: StatusReport, view: View): string[] {
  if (hosts === undefined) return [];
  const on = `Claims of every host on remote "${hosts.remote}"`;
  if (hosts.error !== null) return wrap(`${on}: ${hosts.error}`, '', '  ');
  const when =
    hosts.fetchedAt === null ? 'fetch time unknown' : `fetched ${view.at(hosts.fetchedAt)}`;
  return [
    ...wrap(`${on} (${hosts.claims.length}, ${when}):`, '', '  '),
    ...claimViewLines(hosts.claims, view.now),
  ];
}

function needLines(need: NeedsYou, view: View): string[] {
  const head = (where: string, what: string) => wrap(`${where}  ${what}`, '  ', '    ');
  const more = (text: string) => wrap(text, '    ', '    ');
  const file = view.path(need.file);
  switch (need.kind) {
    case 'input': {
      const asked = { state: 'waiting', event: '', at: need.since } as const;
      const text = agentStateText(
        need.question === null ? asked : { ...asked, detail: need.question },
        view.now,
      );
      return [...head(file, `#claimed-${need.noun}`), ...more(text)];
    }
    case 'given-up':
      return [
        ...head(file, `${need.tag}  given up`),
        ...more(`${need.reason}; approve it to retry`),
      ];
    case 'approval': {
      const where = need.place === 'prose' ? `${file}:${need.line}` : file;
      const inline = need.place === 'prose' ? ' (inline)' : '';
      return [...head(where, `${need.tag}  waits for approval${inline}`), ...more(need.title)];
    }
    case 'not-dispatched': {
      const where = need.line === null ? file : `${file}:${need.line}`;
      return [...head(where, `${need.tags.join(' ')}  never dispatched`), ...more(need.reason)];
    }
  }
}

function waitingLines(waiting: readonly WaitingItem[], view: View, daemonRuns: boolean): string[] {
  const ready = daemonRuns ? 'next' : 'ready once a daemon runs';
  const shown = waiting.slice(0, WAITING_SHOWN);
  return section(
    `Waiting (${waiting.length}), in dispatch order:`,
    shown.map((w, i) => ({ w, n: `${i + 1}. ` })),
    waiting.length - shown.length,
    ({ w, n }) => [
      ...wrap(
        `${n}${view.path(w.file)}  #delegated-${w.noun}  ${w.skill}  P${w.weight}${w.aged ? ', aged one band up' : ''}`,
        '  ',
        '     ',
      ),
      ...wrap(w.wait === null ? ready : waitText(w.wait, view.now), '     ', '     '),
    ],
    ' (engine status --json lists them all)',
  );
}

function claimLines(c: ClaimItem, view: View): string[] {
  const attempt = c.attempt === null ? '' : `  attempt ${c.attempt}`;
  const age = c.ageSeconds === null ? '' : `, ${duration(c.ageSeconds * 1000)}`;
  const beat = c.lastHeartbeat ? `; heartbeat ${view.at(c.lastHeartbeat)}` : '';
  const agent = agentStateText(c.agentState, view.now);
  return [
    ...wrap(`${view.path(c.file)}  #claimed-${c.noun}${attempt}${age}`, '  ', '    '),
    ...wrap(
      `${c.pid === null ? '' : `pid ${c.pid}: `}${c.liveness}${c.pane ? `; window ${c.pane}` : ''}${beat}`,
      '    ',
      '    ',
    ),
    ...(agent === '' ? [] : wrap(agent, '    ', '    ')),
    ...(c.session === null ? [] : wrap(`session ${c.session}`, '    ', '    ')),
    ...resumeLines(c.agentSessionId),
  ];
}

function doneLines(e: DoneItem, view: View): string[] {
  const tag = e.event === 'done' && e.noun !== undefined ? `  #done-${e.noun}` : '';
  const reason = e.reason ? `: ${e.reason}` : '';
  const details = outcome(e.result);
  return [
    ...wrap(
      `${view.at(e.time)}  ${e.event}  ${view.path(e.file ?? '')}${tag}${reason}`,
      '  ',
      '    ',
    ),
    ...(details === '' ? [] : wrap(details, '    ', '    ')),
    ...resumeLines(e.agentSessionId),
  ];
}

/** How to reopen the agent's conversation, from the root. */
function resumeLines(agentSessionId: string | null): string[] {
  return agentSessionId === null ? [] : wrap(`agent session ${agentSessionId}`, '    ', '    ');
}

/** A print run's cost and turns, and how it ended when not `completed`. */
function outcome(result: PrintResult | null): string {
  if (result === null) return '';
  const cost = result.costUsd === null ? '' : `cost $${result.costUsd.toFixed(4)}`;
  const turns = result.numTurns === null ? '' : `${result.numTurns} turns`;
  const ended =
    result.terminalReason === null || result.terminalReason === 'completed'
      ? ''
      : `ended ${result.terminalReason}${result.apiErrorStatus === null ? '' : ` (${result.apiErrorStatus})`}`;
  return [cost, turns, ended].filter((part) => part !== '').join('  ');
}
