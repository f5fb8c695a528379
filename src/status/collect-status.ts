/**
 * What `engine status` shows, read from the files: waiting `#delegated-X` items in dispatch
 * order, files that are not dispatched (two lifecycle states of one noun), claims with their
 * session and whether its agent lives, and what ended recently.
 */
import { readPause, type LimitPause } from '../sessions/limit-pause.js';
import { stat } from 'node:fs/promises';
import { realpath } from 'node:fs/promises';
import type { DispatchTable } from '../dispatch/dispatch-table.js';
import {
  dispatchOrder,
  readiness,
  readyAtOf,
  type OrderKey,
  type Readiness,
  type Wait,
} from '../dispatch/work-order.js';
import { claimOf, twoStatesProblem, workItemsOf, type FileWork } from '../dispatch/work-items.js';
import { readRequestFile } from '../files/read-text-file.js';
import { systemProbe, type ProcProbe } from '../process/process-identity.js';
import { readAgentState, type AgentState } from '../agents/agent-state.js';
import { readEvents, type EngineEvent } from '../sessions/event-log.js';
import {
  judgeSession,
  judgeUnrecorded,
  type JudgeOptions,
  type SessionVerdict,
} from '../sessions/judge-session.js';
import { claimTime, resolveSessionRef } from '../sessions/session-dir.js';
import { startTokenTime } from '../sessions/session-markers.js';
import type { PrintResult } from '../sessions/session-state.js';
import { readSessionState, readStateRecord } from '../sessions/session-state.js';
import { sessionReference } from '../tags/lifecycle-edits.js';
import { ScanPool } from '../tags/scan-pool.js';
import { walkMarkdownFiles } from '../tags/walk-markdown.js';

export interface WaitingItem {
  file: string;
  noun: string;
  skill: string | null;
  weight: number;
  tablePriority: number | null;
  dispatchable: boolean;
  /** What it waits for before the daemon may claim it (dispatch/work-order.ts); null: nothing. */
  wait: Wait | null;
}

export interface ClaimItem {
  file: string;
  noun: string;
  session: string | null;
  status: string | null;
  pid: number | null;
  alive: boolean;
  liveness: string;
  pane: string | null;
  startedAt: string | null;
  ageSeconds: number | null;
  lastHeartbeat: string | null;
  /** The agent's Claude Code session id: `claude --resume <id>` from the root reopens it. */
  agentSessionId: string | null;
  /** What the agent's own hooks last said (src/agents/agent-state.ts); null: nothing yet. */
  agentState: AgentState | null;
}

/**
 * A finished claim's event, with the agent session id its session recorded and a print run's
 * result (cost, turns, ...) once its exit was recorded (null: none).
 */
export type RecentEvent = EngineEvent & {
  agentSessionId: string | null;
  result: PrintResult | null;
};

/** A file none of whose work is dispatched, and why (two lifecycle states of one noun). */
export interface NotDispatched {
  file: string;
  tags: string[];
  reason: string;
}

export interface StatusReport {
  root: string;
  waiting: WaitingItem[];
  notDispatched: NotDispatched[];
  running: ClaimItem[];
  stale: ClaimItem[];
  recent: RecentEvent[];
  /** The queue-wide pause after a usage limit (sessions/.engine/pause.json), or null. */
  paused: LimitPause | null;
}

/** How claims are judged (the project's settings, as the daemon does: judge-session.ts), and items found ready. */
export interface StatusJudging {
  now: Date;
  options: JudgeOptions;
  probe: ProcProbe;
  /** The daemon's --debounce-ms: how long a file must be quiet before it is read. */
  debounceMs: number;
}

export async function collectStatus(
  root: string,
  paths: string[],
  table: DispatchTable,
  {
    now = new Date(),
    options,
    probe = systemProbe,
    // The CLI passes the project's; 0: no quiet period.
    debounceMs = 0,
  }: Partial<StatusJudging> & Pick<StatusJudging, 'options'>,
): Promise<StatusReport> {
  const judging = { now, options, probe, debounceMs };
  const pool = new ScanPool();
  const waiting: Ordered[] = [];
  const notDispatched: NotDispatched[] = [];
  const running: ClaimItem[] = [];
  const stale: ClaimItem[] = [];
  try {
    for (const dir of paths) {
      for await (const path of walkMarkdownFiles(dir)) {
        const read = readRequestFile(path, ['delegated-', 'claimed-']);
        if (read.kind !== 'text') continue;
        const decoded = read.file;
        const scan = await pool.scan(decoded.text).catch(() => null);
        if (!scan) continue;
        const file = await realpath(path).catch(() => path);
        const mtime = (await stat(path).catch(() => null))?.mtimeMs ?? 0;
        const facts = { mtimeMs: mtime, lastRecovery: scan.lastRecovery };
        const work = workItemsOf(file, scan.occurrences, (noun) => table.get(noun) ?? null, {
          readyAt: readyAtOf(facts, debounceMs),
        });
        for (const twice of work.twoStates) {
          notDispatched.push({ file, tags: twice.tags, reason: twoStatesProblem(twice) });
        }
        const ready = readiness({ ...facts, claim: claimOf(work) }, debounceMs, now.getTime());
        waiting.push(...waitingIn(file, work, ready));
        for (const { noun } of work.claims.filter((claim) => !claim.done)) {
          const claim = { file, noun, text: decoded.text, mtime };
          const item = await describeClaim(root, claim, judging);
          (item.alive ? running : stale).push(item);
        }
      }
    }
  } finally {
    await pool.close();
  }
  const dayAgo = now.getTime() - 24 * 3600_000;
  const finished = finishedOnce(
    (await readEvents(root)).filter((e) => Date.parse(e.time) >= dayAgo),
  ).slice(-20);
  const recent: RecentEvent[] = [];
  for (const event of finished) {
    recent.push({ ...event, ...(await recordedOf(root, event.session)) });
  }
  return {
    root,
    // The daemon's order; the items it never claims (no dispatchable row) after all of them.
    waiting: [
      ...dispatchOrder(waiting.filter(({ item }) => item.dispatchable)),
      ...dispatchOrder(waiting.filter(({ item }) => !item.dispatchable)),
    ].map(({ item }) => item),
    notDispatched,
    running,
    stale,
    recent,
    paused: await readPause(root),
  };
}

async function describeClaim(
  root: string,
  { file, noun, text, mtime }: { file: string; noun: string; text: string; mtime: number },
  { now, options, probe }: StatusJudging,
): Promise<ClaimItem> {
  const session = sessionReference(text);
  const base: ClaimItem = {
    file,
    noun,
    session,
    status: null,
    pid: null,
    alive: false,
    liveness: session ? 'no session record' : 'claimed without a Session line',
    pane: null,
    startedAt: null,
    ageSeconds: null,
    lastHeartbeat: null,
    agentSessionId: null,
    agentState: null,
  };
  const dir = session ? resolveSessionRef(root, session) : null;
  if (!session || !dir) return base;
  const read = await readSessionState(dir);
  if ('missing' in read) {
    return { ...base, ...shown(judgeUnrecorded(claimTime(session) ?? mtime, now, options)) };
  }
  if (!('state' in read)) {
    return { ...base, liveness: 'malformed' in read ? read.malformed : read.error };
  }
  const s = read.state;
  const item: ClaimItem = {
    ...base,
    status: s.status,
    pid: s.pid,
    pane: s.tmux?.pane ?? null,
    startedAt: s.startedAt,
    ageSeconds: Math.round((now.getTime() - Date.parse(s.startedAt)) / 1000),
    lastHeartbeat: s.lastHeartbeat,
    agentSessionId: s.agentSessionId ?? null,
    agentState: await readAgentState(dir),
  };
  const records = { startTokenAt: await startTokenTime(dir) };
  return { ...item, ...shown(judgeSession(s, records, now, options, probe)) };
}

/** A waiting item with what orders it. */
type Ordered = OrderKey & Readiness & { item: WaitingItem };

/** The `#delegated-X` tags of a file, each with its row, if any, and the file's readiness. */
function waitingIn(file: string, work: FileWork, ready: Readiness): Ordered[] {
  return work.delegated.map(({ noun, route }) => ({
    ...ready,
    weight: work.weight,
    tablePriority: route?.priority ?? Infinity,
    item: {
      file,
      noun,
      skill: route?.skill ?? null,
      weight: work.weight,
      tablePriority: route?.priority ?? null,
      dispatchable: route?.dispatchable ?? false,
      wait: ready.wait,
    },
  }));
}

/** How a session ended, most telling first: an agent that exited is done, or was requeued. */
const ENDINGS = ['done', 'requeued', 'exited'];

/**
 * One event per finished session: its `done` or `requeued`, else its `exited` (a session whose
 * claim ended otherwise, a request deleted under it). In the order the sessions ended.
 */
export function finishedOnce(events: EngineEvent[]): EngineEvent[] {
  const bySession = new Map<string, EngineEvent>();
  events.forEach((event, i) => {
    const rank = ENDINGS.indexOf(event.event);
    if (rank === -1) return;
    const key = event.session ?? `#${i}`;
    const kept = bySession.get(key);
    if (kept && ENDINGS.indexOf(kept.event) <= rank) return;
    bySession.delete(key);
    bySession.set(key, event);
  });
  return [...bySession.values()];
}

async function recordedOf(
  root: string,
  session: string | undefined,
): Promise<Pick<RecentEvent, 'agentSessionId' | 'result'>> {
  const dir = session === undefined ? null : resolveSessionRef(root, session);
  const read = dir === null ? null : await readStateRecord(dir);
  if (read === null || !('state' in read)) return { agentSessionId: null, result: null };
  return { agentSessionId: read.state.agentSessionId ?? null, result: read.state.result ?? null };
}

function shown(verdict: SessionVerdict): Pick<ClaimItem, 'alive' | 'liveness'> {
  return verdict.alive
    ? { alive: true, liveness: verdict.detail }
    : { alive: false, liveness: verdict.reason };
}
