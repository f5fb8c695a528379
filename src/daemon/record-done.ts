/**
 * The `done` of an item: one event (and with it one notification) per session that finished,
 * whoever saw it: the follower of the claim, the reaper, or a daemon that starts after the agent
 * marked done while none ran. Exactly once across a crash at any step: the observer that creates
 * the session's `.done-event` mark (O_EXCL) records the event, then writes `.done`; a daemon that
 * starts (holding the daemon lock, before anything else can record) finds a session with the
 * first mark and not the second, and records the event only if the event log lacks it.
 */
import { realpath } from 'node:fs/promises';
import { messageOf } from '../errors.js';
import { readEvents, type EngineEvent } from '../sessions/event-log.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import {
  isDoneEventTaken,
  isSessionDone,
  markSessionDone,
  takeDoneEvent,
} from '../sessions/session-markers.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { transitionTags } from '../tags/tag-name.js';
import { nameWorktree } from '../worktrees/worktree-line.js';
import { claimStoreOf } from './claim-store.js';
import type { DaemonContext } from './daemon-context.js';
import { failpoint } from './failpoint.js';

export interface FinishedItem {
  file: string;
  noun: string;
  /** The session ref the request's Session line names. */
  session: string;
}

/**
 * Records that `item` is done, unless it was recorded already. Only the session that claimed
 * this request for this noun counts: a Session line copied into another file, or left in a
 * request that moved, does not make that file's `#done-X` the session's. True when this call
 * recorded it.
 */
export async function recordDone(ctx: DaemonContext, item: FinishedItem): Promise<boolean> {
  const dir = resolveSessionRef(ctx.options.root, item.session);
  if (!dir || (await isSessionDone(dir))) return false;
  const read = await readSessionState(dir);
  if (!('state' in read) || !(await isClaimOf(read.state, item))) {
    ctx.log('debug', `${item.file} shows #done-${item.noun}, not of ${item.session}'s claim`);
    return false;
  }
  // Published where claims are kept (git: with the lease's end); a fenced one does not count.
  const published = await claimStoreOf(ctx).publishDone(item);
  if (!published.counted) {
    ctx.log(
      'warn',
      `${item.file} shows #done-${item.noun} of ${item.session}, not counted: ${published.why}`,
    );
    await finish(ctx, item, dir);
    return false;
  }
  if (!(await takeDoneEvent(dir))) return false;
  failpoint('after-done-mark');
  // As the session names itself, so that a restart finds this event by it.
  await announce(ctx, { ...item, session: read.state.sessionRef }, dir);
  return true;
}

/**
 * At start, before anything else can record a `done`: completes each session that finished while
 * no daemon ran (its request shows `#done-X` under its own Session line), and each that a crash
 * left between the two marks (the event recorded only if the log lacks it).
 */
export async function settleDone(
  ctx: DaemonContext,
  sessions: Array<{ dir: string; state: SessionState }>,
): Promise<void> {
  let logged: EngineEvent[] | null = null;
  for (const { dir, state } of sessions) {
    const item = { file: state.requestFile, noun: state.noun, session: state.sessionRef };
    try {
      if (await isSessionDone(dir)) continue;
      if (!(await isDoneEventTaken(dir))) {
        if (await showsDone(ctx, item, dir)) await recordDone(ctx, item);
        continue;
      }
      logged ??= await readEvents(ctx.options.root);
      const recorded = logged.some((e) => e.event === 'done' && e.session === item.session);
      if (recorded) await finish(ctx, item, dir);
      else await announce(ctx, item, dir);
    } catch (error) {
      ctx.log('error', `${item.session}: cannot tell whether it finished: ${messageOf(error)}`);
    }
  }
}

/** The event (its notification follows from it), then `.done`: the session is over. */
async function announce(ctx: DaemonContext, item: FinishedItem, dir: string): Promise<void> {
  ctx.log('info', `done: ${item.file} (#done-${item.noun})`);
  await ctx.recordEvent({ event: 'done', ...item });
  failpoint('after-done-event');
  await finish(ctx, item, dir);
}

async function finish(ctx: DaemonContext, item: FinishedItem, dir: string): Promise<void> {
  await markSessionDone(dir);
  // Git claims: the branch went to the remote with the done; the checkout's copy is not edited.
  if (!claimStoreOf(ctx).inPlace) return;
  // The branch and worktree stay for review: the request file names them.
  await nameWorktree(item.file, dir).catch((error: unknown) =>
    ctx.log('warn', `could not name the worktree in ${item.file}: ${messageOf(error)}`),
  );
}

async function isClaimOf(state: SessionState, item: FinishedItem): Promise<boolean> {
  if (state.noun !== item.noun) return false;
  const real = await realpath(item.file).catch(() => item.file);
  return state.requestFile === real;
}

/** Whether the request shows `#done-X` on its Tags line (or front matter) under the session's line. */
async function showsDone(ctx: DaemonContext, item: FinishedItem, dir: string): Promise<boolean> {
  const read = ctx.readRequest(item.file);
  if (read.kind !== 'text') return false;
  const scan = await ctx.scan(read.file.text);
  const done = transitionTags('finish', item.noun).to;
  return (
    scan.session !== null &&
    resolveSessionRef(ctx.options.root, scan.session) === dir &&
    scan.occurrences.some((o) => o.place !== 'prose' && o.tag === done)
  );
}
