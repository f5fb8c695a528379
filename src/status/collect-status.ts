/**
 * What `engine status` shows, read from the files: waiting `#delegated-X` items in dispatch
 * order, claims with their session and whether its agent lives, and what ended recently.
 */
import { stat } from 'node:fs/promises';
import { realpath } from 'node:fs/promises';
import type { DispatchTable } from '../dispatch/dispatch-table.js';
import { compareOrder } from '../dispatch/work-order.js';
import { workItemsOf } from '../dispatch/work-items.js';
import { readRequestFile } from '../files/read-text-file.js';
import { checkLiveness, describeLiveness, isAlive } from '../process/process-identity.js';
import { readEvents, type EngineEvent } from '../sessions/event-log.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { readSessionState } from '../sessions/session-state.js';
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
}

export interface StatusReport {
  root: string;
  waiting: WaitingItem[];
  running: ClaimItem[];
  stale: ClaimItem[];
  recent: EngineEvent[];
}

export async function collectStatus(
  root: string,
  paths: string[],
  table: DispatchTable,
  now = new Date(),
): Promise<StatusReport> {
  const pool = new ScanPool();
  const waiting: Array<WaitingItem & { readyAt: number }> = [];
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
          const item = await describeClaim(root, file, noun, decoded.text, now);
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
  const recent = (await readEvents(root))
    .filter(
      (e) =>
        (e.event === 'done' || e.event === 'requeued' || e.event === 'exited') &&
        Date.parse(e.time) >= dayAgo,
    )
    .slice(-20);
  return { root, waiting: waiting.map(({ readyAt: _r, ...rest }) => rest), running, stale, recent };
}

async function describeClaim(
  root: string,
  file: string,
  noun: string,
  text: string,
  now: Date,
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
  };
  const dir = session ? resolveSessionRef(root, session) : null;
  if (!dir) return base;
  const read = await readSessionState(dir);
  if (!('state' in read)) {
    const why =
      'missing' in read ? 'no session record' : 'malformed' in read ? read.malformed : read.error;
    return { ...base, liveness: why };
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
  };
  if (s.status !== 'running' || s.pid === null || s.startTicks === null || s.bootId === null) {
    return { ...item, alive: s.status === 'starting', liveness: s.status };
  }
  const identity = { pid: s.pid, startTicks: s.startTicks, bootId: s.bootId, host: s.host };
  const liveness = checkLiveness(identity);
  return {
    ...item,
    alive: isAlive(liveness) || liveness === 'other-host',
    liveness: isAlive(liveness) ? 'alive' : describeLiveness(identity, liveness),
  };
}
