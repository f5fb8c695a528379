/**
 * The §TAG_DISPATCH table from `directives/TAGS.md`: which skill resolves each `#delegated-X`,
 * at what priority, whether the daemon may dispatch it, and how many of its agents may run at
 * once (an optional Max column; empty or `-`: no cap of its own). Two forms are accepted:
 *
 *   | `#delegated-fix` | `/fix` | agent | 3 | yes | 2 |   (table: Tag, Skill, Mode, Priority, Daemon, Max)
 *   - `#delegated-fix`: skill `/fix`, mode agent, priority 3, daemon yes, max 2     (bullet list)
 */
import { EngineError } from '../errors.js';
import { LIFECYCLE_STATES } from '../tags/tag-name.js';

export interface DispatchRoute {
  noun: string;
  skill: string;
  mode: string;
  /** Lower first; fractional values such as 4.5 are valid. */
  priority: number;
  dispatchable: boolean;
  /** Agents of this noun running at once at most, beside --max-agents; absent: no cap of its own. */
  max?: number;
}

export type DispatchTable = Map<string, DispatchRoute>;

const SECTION = /^(#{1,6})\s+.*§TAG_DISPATCH\b/;
const NOUN = new RegExp(`#(?:${LIFECYCLE_STATES.join('|')})-([a-z0-9][a-z0-9-]*)`);
const NO = /^(no|false|never|manual)$/i;

export function parseDispatchTable(markdown: string, source = 'directives/TAGS.md'): DispatchTable {
  const lines = markdown.split(/\r?\n/);
  const start = lines.findIndex((line) => SECTION.test(line));
  // Every error names a line, so a bad edit can be found from the log alone.
  if (start === -1) throw new EngineError(`${source}:1: no §TAG_DISPATCH section`);
  const level = (SECTION.exec(lines[start] as string)?.[1] ?? '#').length;
  const table: DispatchTable = new Map();
  let header: string[] | null = null;
  let inFence = false;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^(#{1,6})\s/.exec(line);
    if (heading && (heading[1] as string).length <= level) break;
    const where = `${source}:${i + 1}`;
    if (/^\s*\|/.test(line)) {
      const cells = splitRow(line);
      if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
      if (!header && !NOUN.test(line)) {
        header = cells.map((c) => c.toLowerCase());
        continue;
      }
      addRoute(table, routeFromCells(cells, header, where), where);
    } else if (/^\s*[-*+]\s/.test(line) && NOUN.test(line)) {
      addRoute(table, routeFromBullet(line, where), where);
    }
  }
  if (table.size === 0)
    throw new EngineError(`${source}:${start + 1}: the §TAG_DISPATCH section has no rows`);
  return table;
}

function splitRow(line: string): string[] {
  const trimmed = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return trimmed.split('|').map((cell) => cell.trim());
}

function column(header: string[] | null, name: string, fallback: number): number {
  const index = header?.findIndex((h) => h.includes(name)) ?? -1;
  return index === -1 ? fallback : index;
}

function routeFromCells(cells: string[], header: string[] | null, where: string): DispatchRoute {
  const cell = (name: string, fallback: number) => cells[column(header, name, fallback)] ?? '';
  const noun = NOUN.exec(cell('tag', 0))?.[1];
  if (!noun)
    throw new EngineError(`${where}: the Tag cell must hold a tag such as \`#delegated-fix\``);
  const daemonCell = header ? cell('daemon', -1) : (cells[4] ?? '');
  return {
    noun,
    skill: stripCode(cell('skill', 1)),
    mode: stripCode(cell('mode', 2)),
    priority: parsePriority(cell('priority', 3), where),
    dispatchable: !NO.test(stripCode(daemonCell)),
    max: parseMax(header ? cell('max', -1) : (cells[5] ?? ''), where),
  };
}

function routeFromBullet(line: string, where: string): DispatchRoute {
  const noun = NOUN.exec(line)?.[1] as string;
  const skill = /skill:?\s*`?([^`,\s)]+)`?/i.exec(line)?.[1] ?? /`(\/[^`]+)`/.exec(line)?.[1];
  if (!skill) throw new EngineError(`${where}: the bullet for #delegated-${noun} names no skill`);
  const priority = /priority:?\s*([^,)\s]+)/i.exec(line)?.[1] ?? '';
  const mode = /mode:?\s*([^,)]+)/i.exec(line)?.[1]?.trim() ?? '';
  const daemon = /daemon:?\s*([a-z]+)/i.exec(line)?.[1] ?? 'yes';
  const max = /\bmax(?::\s*|\s+)([^,)\s]+)/i.exec(line)?.[1] ?? '';
  return {
    noun,
    skill,
    mode,
    priority: parsePriority(priority, where),
    dispatchable: !NO.test(daemon) && !/not dispatchable/i.test(line),
    max: parseMax(max, where),
  };
}

function parsePriority(text: string, where: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)/.exec(stripCode(text));
  if (!match) throw new EngineError(`${where}: priority '${text}' is not a number`);
  return Number(match[1]);
}

/** A cap of one or more agents; an empty cell or `-` sets none. 0 is refused: Daemon `no` says that. */
function parseMax(text: string, where: string): number | undefined {
  const value = stripCode(text);
  if (value === '' || value === '-') return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new EngineError(
      `${where}: Max '${value}' is not a whole number of agents from 1 up (leave it empty for no cap; Daemon \`no\` stops dispatch)`,
    );
  return Number(value);
}

function stripCode(text: string): string {
  return text.replace(/`/g, '').trim();
}

function addRoute(table: DispatchTable, route: DispatchRoute, where: string): void {
  if (table.has(route.noun))
    throw new EngineError(`${where}: #delegated-${route.noun} has two rows`);
  table.set(route.noun, route);
}
