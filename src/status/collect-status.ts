/**
 * What `engine status` shows, read from the files: waiting `#delegated-X` items in dispatch
 * order, files that are not dispatched (two lifecycle states of one noun), claims with their
 * session and whether its agent lives, and what ended recently.
 */
import { readPause, type LimitPause } from '../sessions/limit-pause.js';
import { stat } from 'node:fs/promises';
import { realpath } from 'node:fs/promises';
import type { DispatchTable } from '../dispatch/dispatch-table.js';
import { compareOrder } from '../dispatch/work-order.js';
import { twoStatesProblem, workItemsOf } from '../dispatch/work-items.js';
import { readRequestFile } from '../files/read-text-file.js';
import { systemProbe, type ProcProbe } from '../process/process-identity.js';
import { readAgentState, type AgentState } from '../sessions/agent-state.js';
import { readEvents, type EngineEvent } from '../sessions/event-log.js';
import {
  DEFAULT_JUDGE_OPTIONS,
  judgeSession,
  judgeUnrecorded,
  type JudgeOptions,
  type SessionVerdict,
} from '../sessions/judge-session.js';
import { claimTime, resolveSessionRef } from '../sessions/session-dir.js';
import { startTokenTime } from '../sessions/session-markers.js';
import type { PrintResult } from '../sessions/print-result.js';
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
  /** What the agent's own hooks last said (src/sessions/agent-state.ts); null: nothing yet. */
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

/** How claims are judged: as the daemon does by default (judge-session.ts). */
export interface StatusJudging {
  now: Date;
  options: JudgeOptions;
  probe: ProcProbe;
}

export async function collectStatus(
  root: string,
  paths: string[],
  table: DispatchTable,
  {
    now = new Date(),
    options = DEFAULT_JUDGE_OPTIONS,
    probe = systemProbe,
  }: Partial<StatusJudging> = {},
): Promise<StatusReport> {
  const judging = { now, options, probe };
  const pool = new ScanPool();
  const waiting: Array<WaitingItem & { readyAt: number }> = [];
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
        const work = workItemsOf(file, scan.occurrences, (noun) => table.get(noun) ?? null, {
          readyAt: mtime,
        });
        for (const twice of work.twoStates) {
          notDispatched.push({ file, tags: twice.tags, reason: twoStatesProblem(twice) });
        }
        for (const { noun, route } of work.delegated) {
          waiting.push({
            file,
            noun,
            skill: route?.skill ?? null,
            weight: work.weight,
            tablePriority: route?.priority ?? null,
            dispatchable: route?.dispatchable ?? false,
            readyAt: mtime,
          });
        }
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
  waiting.sort((a, b) =>
    compareOrder(
      { weight: a.weight, tablePriority: a.tablePriority ?? Infinity, readyAt: a.readyAt },
      { weight: b.weight, tablePriority: b.tablePriority ?? Infinity, readyAt: b.readyAt },
    ),
  );
  const dayAgo = now.getTime() - 24 * 3600_000;
  const finished = (await readEvents(root))
    .filter(
      (e) =>
        (e.event === 'done' || e.event === 'requeued' || e.event === 'exited') &&
        Date.parse(e.time) >= dayAgo,
    )
    .slice(-20);
  const recent: RecentEvent[] = [];
  for (const event of finished) {
    recent.push({ ...event, ...(await recordedOf(root, event.session)) });
  }
  return {
    root,
    waiting: waiting.map(({ readyAt: _r, ...rest }) => rest),
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
