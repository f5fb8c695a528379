/**
 * Shared pieces of the reliability suite (test/reliability): the torture switch, figure
 * recording for docs/RELIABILITY.md, a daemon on a temp root with short intervals, request-file
 * helpers and crafted session records. Not a test file itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  agentStarts,
  makeRoot,
  startDaemon,
  type AgentStart,
  type DaemonProcess,
  type TestRoot,
} from '../helpers/daemon-harness.js';
import { craftedState } from '../helpers/crafted-state.js';
import { waitFor } from '../helpers/wait-for.js';

export { craftedState };

/** `npm run test:torture` sets ENGINE_TORTURE=1: more rounds, more files, longer runs. */
export const TORTURE = process.env.ENGINE_TORTURE === '1';

/** Picks the default-profile or the torture-profile size of a run. */
export function scale(normal: number, torture: number): number {
  return TORTURE ? torture : normal;
}

/**
 * Records a measured figure. With ENGINE_RELIABILITY_FIGURES=<file>, appends one JSON line
 * there (docs/RELIABILITY.md is written from those lines); otherwise does nothing.
 */
export function recordFigure(name: string, figure: Record<string, unknown>): void {
  const file = process.env.ENGINE_RELIABILITY_FIGURES;
  if (!file) return;
  appendFileSync(
    file,
    `${JSON.stringify({ name, torture: TORTURE, ...figure, at: new Date().toISOString() })}\n`,
  );
}

export const GRACE_MS = 4000;
/**
 * Short intervals, so crashes, grace periods and reaps play out in seconds. The grace period is
 * 4 s, not 1 s: on a loaded 2-core machine a wrapper needs over a second to record its pid, and
 * a shorter grace requeues healthy starts.
 */
export const FAST = [
  '--claim-grace-ms',
  String(GRACE_MS),
  '--reap-interval-ms',
  '300',
  '--debounce-ms',
  '200',
  '--rescan-interval-ms',
  '1000',
];

/** One temp root with its daemons and helper processes; `close()` ends all of it. */
export class Scenario {
  readonly daemons: DaemonProcess[] = [];
  readonly children: ChildProcess[] = [];
  private constructor(readonly t: TestRoot) {}

  static async open(): Promise<Scenario> {
    return new Scenario(await makeRoot());
  }

  get root(): string {
    return this.t.root;
  }

  get sessions(): string {
    return this.t.sessions;
  }

  file(name: string): string {
    return join(this.t.sessions, name);
  }

  start(extra: string[] = [], env: Record<string, string> = {}): DaemonProcess {
    const d = startDaemon(this.t, [...FAST, ...extra], env);
    this.daemons.push(d);
    return d;
  }

  /** Runs `--once` and resolves to its exit code and output. */
  async once(
    extra: string[] = [],
    env: Record<string, string> = {},
  ): Promise<{ code: number | null; output: string }> {
    const d = this.start(['--once', ...extra], env);
    const code = await d.exited;
    return { code, output: d.output() };
  }

  track(child: ChildProcess): ChildProcess {
    this.children.push(child);
    return child;
  }

  agents(): AgentStart[] {
    return agentStarts(this.t);
  }

  /** Kills every daemon and helper, then every agent and wrapper (by pid), and the tmux server. */
  async close(): Promise<void> {
    for (const d of this.daemons)
      if (d.child.exitCode === null && !d.child.signalCode) await d.kill9();
    for (const c of this.children) {
      if (c.exitCode === null && c.signalCode === null && c.pid) {
        try {
          process.kill(c.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    await this.t.cleanup();
  }
}

export const read = (path: string): Promise<string> => readFile(path, 'utf8');

/** The tags on the Tags line of a request text. */
export function tagsOf(text: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith('**Tags**:')) ?? '';
  // Whole tags (docs/TAGS.md): the longest run of name characters after a '#' not glued to a word.
  return (
    line.slice('**Tags**:'.length).match(/(?<![\p{L}\p{N}_/&#-])#[A-Za-z0-9][A-Za-z0-9-]*/gu) ?? []
  );
}

export const recoveries = (text: string): number =>
  text.split('\n').filter((l) => l === '## Recovery').length;

/** Waits until the file's Tags line has one of the tags; resolves to the text. */
export function waitForTag(file: string, tags: string[], timeoutMs = 20_000): Promise<string> {
  return waitFor(
    async () => {
      const text = await read(file);
      return tagsOf(text).some((t) => tags.includes(t)) ? text : null;
    },
    { timeoutMs, message: `${file} to carry ${tags.join(' or ')}` },
  );
}

/** Lifecycle events of the daemon's event log. */
export interface EngineEvent {
  event: string;
  file?: string;
  noun?: string;
  session?: string;
  reason?: string;
}

export function events(root: string): EngineEvent[] {
  const path = join(root, 'sessions', '.engine', 'events.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EngineEvent);
}

/** Counts of a key over a list. */
export function countBy<T>(list: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of list) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/**
 * Writes a request claimed by `ref` and that session's record (`state` as an object, raw text,
 * or null for none). Resolves to the request file.
 */
export async function craftClaim(
  s: Scenario,
  name: string,
  ref: string,
  state: Record<string, unknown> | string | null,
): Promise<string> {
  const file = s.file(name);
  await writeFile(file, `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n\nHuman text.\n`);
  const dir = join(s.root, ref);
  await mkdir(dir, { recursive: true });
  if (state !== null)
    await writeFile(
      join(dir, '.state.json'),
      typeof state === 'string' ? state : JSON.stringify(state),
    );
  return file;
}

/** A fresh session ref whose name encodes a claim time `ageMs` ago (UTC, like the daemon). */
export function sessionRef(ageMs: number, tag: string): string {
  const d = new Date(Date.now() - ageMs);
  const p = (n: number) => String(n).padStart(2, '0');
  return `sessions/${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}_FIX_${tag}_abcd`;
}

/** Spawns a helper process tracked by the scenario. */
export function spawnTracked(
  s: Scenario,
  command: string,
  args: string[],
  options: Parameters<typeof spawn>[2] = {},
): ChildProcess {
  const child = spawn(command, args, { stdio: 'ignore', ...options });
  child.on('error', () => undefined);
  return s.track(child);
}

export { waitFor };
