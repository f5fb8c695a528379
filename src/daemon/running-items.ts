/**
 * The other items running now, for the note in each agent's prompt (agents/running-note.ts):
 * this daemon's running sessions (host: this host, branch: its worktree's), and with git claims
 * every other held claim as the daemon's last fetch left it in the clone's seen refs (no fetch
 * here: a launch never waits on the network), with the branch its record names.
 */
import { hostname } from 'node:os';
import { dirname, relative } from 'node:path';
import { lastSeenClaims } from '../claims/claims-view.js';
import type { RunningItem } from '../agents/running-note.js';
import { cloneTop } from '../process/run-git.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { readSessionState } from '../sessions/session-state.js';
import type { DaemonShared } from './daemon-shared.js';
import type { PlannedItem } from './request-snapshot.js';

/** Every item running now but `item`, on any host; the held claims only with git claims. */
export async function otherRunningItems(
  shared: DaemonShared,
  item: PlannedItem,
): Promise<RunningItem[]> {
  const { options } = shared.ctx;
  const git = options.claims === 'git';
  // With git claims the files are in the daemon's checkout: named as in the repository.
  const base = (git ? await cloneTop(dirname(item.file)) : null) ?? options.root;
  const rows = shared.table
    .list('running')
    .filter((row) => !(row.file === item.file && row.noun === item.noun));
  const here = await Promise.all(
    rows.map(async (row) => ({
      file: relative(base, row.file),
      noun: row.noun,
      host: hostname(),
      branch: row.state.kind === 'running' ? await branchOf(options.root, row.state.session) : null,
    })),
  );
  if (!git) return here;
  const mine = new Set([...here, { file: relative(base, item.file), noun: item.noun }].map(key));
  const seen = await lastSeenClaims({ repo: options.root, remote: options.claimsRemote });
  const elsewhere: RunningItem[] = [];
  for (const { record } of seen?.claims ?? []) {
    if (record === null || record.state !== 'held') continue;
    const claim = { file: record.file, noun: record.noun };
    if (!mine.has(key(claim)))
      elsewhere.push({ ...claim, host: record.holder.host, branch: record.branch ?? null });
  }
  return [...here, ...elsewhere];
}

function key({ file, noun }: { file: string; noun: string }): string {
  return `${file}\0${noun}`;
}

/** The branch of a session's worktree; null without one, or when its record cannot be read. */
async function branchOf(root: string, session: string): Promise<string | null> {
  const dir = resolveSessionRef(root, session);
  if (dir === null) return null;
  const read = await readSessionState(dir);
  return 'state' in read ? (read.state.worktree?.branch ?? null) : null;
}
