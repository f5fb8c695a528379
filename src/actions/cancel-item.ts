/**
 * `engine cancel`: ends a running item's agent and hands the item back to a human: `#needs-X`
 * with a Recovery entry whose reason is `cancelled` (not an attempt: a human stopped it). Only a
 * live claim of an engine session on this host is cancelled; a human's claim (no Session line, or
 * one that names no live session working on this item) is never touched.
 *
 * The race with a running daemon: the edit comes first, a compare-and-swap that holds only while
 * the file still carries this session's claim, and the agent is ended after it. A daemon that
 * then sees the agent end finds the item no longer claimed by that session and leaves it (its
 * requeue is the same compare-and-swap), so a cancel lands on `#needs-X`, never on a retry's
 * `#delegated-X`. Should the daemon requeue first (the agent ended on its own before the cancel),
 * the cancel's edit finds the claim gone, writes nothing and says so.
 */
import { EngineError, PreconditionError } from '../errors.js';
import { editFile } from '../files/tag-file.js';
import { judgeSession } from '../sessions/judge-session.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import {
  isSessionDone,
  markCancelled,
  startTokenTime,
  takeStartToken,
} from '../sessions/session-markers.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { transitionSession } from '../sessions/session-status.js';
import { cancelEdit, sessionReference } from '../tags/lifecycle-edits.js';
import { transitionTags } from '../tags/tag-name.js';
import type { ActionContext } from './action-context.js';
import { endSessionAgent, type AgentEnd } from './end-agent.js';
import { pickItem, readItemFile, type ItemFile } from './item-of.js';

export interface Cancelled {
  file: string;
  noun: string;
  session: string;
  /** The tag the item carries now: `#needs-X`. */
  to: string;
  agentPid: number | null;
  /** How its agent ended: gone already (or never started), or by which signal. */
  ended: AgentEnd;
}

interface LiveClaim {
  item: ItemFile;
  noun: string;
  ref: string;
  dir: string;
  state: SessionState;
}

export async function cancelItem(
  ctx: ActionContext,
  file: string,
  noun: string | undefined,
): Promise<Cancelled> {
  const claim = await liveClaim(ctx, file, noun);
  const to = transitionTags('cancel', claim.noun).to;
  await writeCancel(ctx, claim);
  // From here on no daemon restores this session's claim over a stale save: its agent is ending.
  // (Marked only once the claim is handed back: a mark on a claim the cancel then failed to hand
  // back would let a stale save start a second agent beside the first.)
  await markCancelled(claim.dir);
  // While no wrapper has taken the start token, taking it means no agent ever starts for it.
  const { state, ended } = (await takeStartToken(claim.dir))
    ? { state: claim.state, ended: 'gone' as const }
    : await endSessionAgent(ctx, claim.dir);
  const endedAt = state.endedAt ?? ctx.now().toISOString();
  await transitionSession(
    claim.dir,
    ['starting', 'running', 'exited'],
    'abandoned',
    { ...state, reason: 'cancelled (engine cancel)', endedAt },
    { events: ctx.recordEvent },
  );
  const done: Cancelled = {
    file: claim.item.path,
    noun: claim.noun,
    session: claim.ref,
    to,
    agentPid: state.agentPid,
    ended,
  };
  await ctx.recordEvent({ event: 'cancelled', reason: 'cancelled', ...done });
  return done;
}

/** The item's claim, when it is a live engine session's on this host; else an error saying why. */
async function liveClaim(
  ctx: ActionContext,
  file: string,
  noun: string | undefined,
): Promise<LiveClaim> {
  const item = await readItemFile(file);
  const life = pickItem(item, ['claimed'], noun, 'it is not claimed; nothing to cancel');
  const ref = sessionReference(item.text);
  const human = `${file} is claimed (#claimed-${life.noun}), but not by a live engine session; a human's claim is never touched`;
  if (ref === null) throw new EngineError(`${human} (it has no **Session**: line)`);
  const dir = resolveSessionRef(ctx.root, ref);
  if (dir === null)
    throw new EngineError(`${human} (its Session line '${ref}' is not under ${ctx.root}/sessions)`);
  const read = await readSessionState(dir);
  if (!('state' in read))
    throw new EngineError(`${human} (${ref} has no usable session record: ${recordProblem(read)})`);
  const { state } = read;
  if (state.noun !== life.noun || state.requestFile !== item.path)
    throw new EngineError(`${human} (${ref} works on #${state.noun} of ${state.requestFile})`);
  if (await isSessionDone(dir))
    throw new EngineError(`${human} (${ref} already finished this item)`);
  const records = { startTokenAt: await startTokenTime(dir) };
  const verdict = judgeSession(state, records, ctx.now(), ctx.judge, ctx.probe);
  if (!verdict.alive)
    throw new EngineError(
      `${human} (${ref} has no live agent: ${verdict.reason}; a daemon requeues a dead claim)`,
    );
  if (verdict.by === 'heartbeat')
    throw new EngineError(`${file}: its agent runs on host ${state.host}; cancel it there`);
  return { item, noun: life.noun, ref, dir, state };
}

function recordProblem(
  read: { missing: true } | { malformed: string } | { error: string },
): string {
  if ('missing' in read) return 'none yet (a daemon may be starting it; try again)';
  return 'malformed' in read ? read.malformed : read.error;
}

/** The cancel's edit, only while the file still carries this session's claim. */
async function writeCancel(ctx: ActionContext, claim: LiveClaim): Promise<void> {
  try {
    await editFile(claim.item.file, (text) => cancelEdit(text, claim.noun, claim.ref, ctx.now()));
  } catch (error) {
    if (!(error instanceof PreconditionError)) throw error;
    throw new EngineError(
      `Not cancelled: ${claim.item.file} is no longer claimed by ${claim.ref} (it was finished or requeued meanwhile); nothing was written`,
      { cause: error },
    );
  }
}
