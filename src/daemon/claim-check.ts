/**
 * Decides what a `#claimed-X` needs, from the files alone: the request file's tags and Session
 * line, and the session's `.state.json`. Dead claims are requeued (`#needs-X` + `## Recovery`)
 * in one compare-and-swap write, then the session is marked `abandoned`. A claim is requeued only
 * when neither its wrapper nor its agent process is alive, so a requeue never leaves an agent
 * running; anything that cannot be judged (I/O errors, records of another tool) is left alone.
 */
import { realpath, rename, stat, writeFile } from 'node:fs/promises';
import { editFile } from '../files/tag-file.js';
import { readError, readRequestFile } from '../files/read-text-file.js';
import { EngineError, isErrnoException, messageOf, PreconditionError } from '../errors.js';
import {
  decideRequeue,
  limitResumesAt,
  type Failure,
  type RequeueDecision,
} from '../dispatch/requeue-decision.js';
import { requeueEdit, sessionReference } from '../tags/lifecycle-edits.js';
import { attemptsSoFar, failuresInARow, recoveryRecords } from '../tags/recovery-entries.js';
import { transitionTags } from '../tags/tag-name.js';
import { exitResult } from '../agents/print-result.js';
import { judgeSession, judgeUnrecorded, type SessionVerdict } from '../sessions/judge-session.js';
import { claimTime, resolveSessionRef, sessionDir } from '../sessions/session-dir.js';
import { isSessionDone, startTokenTime, takeStartToken } from '../sessions/session-markers.js';
import {
  readSessionState,
  SESSION_STATUSES,
  type SessionState,
} from '../sessions/session-state.js';
import { isOpen, transitionSession } from '../sessions/session-status.js';
import type { DaemonContext } from './daemon-context.js';
import { pausepoint } from './failpoint.js';
import { failureOf, pauseForLimit, retryPolicy } from './governor.js';

export type ClaimVerdict =
  | { kind: 'alive'; session: string; state: SessionState | null }
  | { kind: 'done'; session: string | null }
  | { kind: 'not-claimed' }
  | { kind: 'foreign'; reason: string }
  /** Cannot be judged now (an I/O error, a file too large to parse): keep it, look again later. */
  | { kind: 'unknown'; reason: string }
  | { kind: 'requeued'; reason: string }
  | { kind: 'gone' };

/** How often one check judges a claim whose file keeps changing under the requeue. */
const JUDGEMENTS = 3;

/** The requeue's compare-and-swap found the file changed since it was read. */
const CHANGED = Symbol('changed');

/** Reads the request and its session, and requeues the claim when its agent is gone. */
export async function checkClaim(
  ctx: DaemonContext,
  file: string,
  noun: string,
): Promise<ClaimVerdict> {
  for (let judged = 1; ; judged++) {
    const verdict = await judgeClaim(ctx, file, noun);
    if (verdict !== CHANGED) return verdict;
    // The requeue found the file no longer claimed by that session: it changed after it was read
    // (typically the agent marked it done, then exited). Judge it again as it is now.
    if (judged === JUDGEMENTS) return { kind: 'not-claimed' };
  }
}

async function judgeClaim(
  ctx: DaemonContext,
  file: string,
  noun: string,
): Promise<ClaimVerdict | typeof CHANGED> {
  const request = readRequestFile(file);
  if (request.kind === 'gone') return { kind: 'gone' };
  if (request.kind !== 'text') return { kind: 'unknown', reason: readError(file, request).message };
  const { text } = request.file;
  let scan;
  try {
    scan = await ctx.scan(text);
  } catch (error) {
    return { kind: 'unknown', reason: `cannot parse ${file}: ${String(error)}` };
  }
  const tags = new Set(scan.occurrences.filter((o) => o.place !== 'prose').map((o) => o.tag));
  // From the bounded scan: never a second, unbounded parse on the daemon's thread.
  const ref = scan.session;
  // A finished item stays finished, even if a stray #claimed-X is left beside #done-X.
  const { from: claimed, to: done } = transitionTags('finish', noun);
  if (tags.has(done)) return { kind: 'done', session: ref };
  if (!tags.has(claimed)) return { kind: 'not-claimed' };
  if (!ref) {
    return {
      kind: 'foreign',
      reason: 'claimed without a **Session**: line (not claimed by the daemon)',
    };
  }
  const dir = resolveSessionRef(ctx.options.root, ref);
  if (!dir) {
    return {
      kind: 'foreign',
      reason: `Session line '${ref}' is not a session under ${ctx.options.root}`,
    };
  }
  // A Session line left by a finished attempt (the agent's done swap keeps it) does not make a
  // later claim, by a human or the next skill, the daemon's: never requeue that.
  if (await isSessionDone(dir)) {
    return {
      kind: 'foreign',
      reason: `Session line names ${ref}, a session that already finished this item: the claim is not the daemon's`,
    };
  }

  const read = await readSessionState(dir);
  const unrecorded = async (): Promise<SessionVerdict | ClaimVerdict> => {
    const since = await claimedAt(file, ref);
    return typeof since === 'number' ? judgeUnrecorded(since, ctx.now(), ctx.options) : since;
  };
  if ('error' in read) return { kind: 'unknown', reason: `${dir}: ${read.error}` };
  if ('malformed' in read) {
    // No agent can run before its wrapper takes the start token: without one, requeueing is safe.
    // With one, an agent may be running that nothing identifies any more: leave it to a human.
    if ((await startTokenTime(dir)) !== null) {
      return {
        kind: 'foreign',
        reason: `${sessionDir(dir).state} is malformed (${read.malformed}) and an agent may be running`,
      };
    }
    const verdict = await unrecorded();
    if ('kind' in verdict) return verdict;
    if (verdict.alive) return { kind: 'alive', session: ref, state: null };
    return requeue(
      ctx,
      file,
      noun,
      ref,
      dir,
      null,
      `session record is malformed (${read.malformed}) and no agent ever started`,
    );
  }
  if ('missing' in read) {
    const verdict = await unrecorded();
    if ('kind' in verdict) return verdict;
    if (verdict.alive) return { kind: 'alive', session: ref, state: null };
    return requeue(ctx, file, noun, ref, dir, null, verdict.reason);
  }
  let state = read.state;
  const real = await realpath(file).catch(() => file);
  const foreign: ClaimVerdict = {
    kind: 'foreign',
    reason: `Session line points at ${ref}, which works on #${state.noun} of ${state.requestFile}`,
  };
  if (state.noun !== noun) return foreign;
  if (state.requestFile !== real) {
    const moved = await followMovedRequest(ctx, dir, ref, state.requestFile, real);
    if (moved === 'copy') return foreign;
    if (moved !== 'moved') return { kind: 'unknown', reason: moved.unknown };
    state = { ...state, requestFile: real };
  }
  const judge = (startTokenAt: number | null): SessionVerdict =>
    judgeSession(state, { startTokenAt }, ctx.now(), ctx.options, ctx.probe);
  let verdict = judge(await startTokenTime(dir));
  // A wrapper that never recorded its pid may still be starting: take its start token first, so
  // it can no longer run an agent on the requeued item. If it took the token meanwhile, judge
  // again by the token's time.
  if (!verdict.alive && verdict.mayStart && !(await takeStartToken(dir))) {
    const taken = await startTokenTime(dir);
    if (taken === null) return { kind: 'alive', session: ref, state };
    verdict = judge(taken);
  }
  if (verdict.alive) return { kind: 'alive', session: ref, state };
  // The wrapper writes `.exit` right before it exits: found gone after a read that came before
  // that write, it is read again, so the requeue gives the agent's exit as its reason.
  if (isOpen(state.status)) {
    const again = await readSessionState(dir);
    if ('state' in again && again.state.status === 'exited') {
      state = { ...again.state, requestFile: state.requestFile };
      verdict = judge(await startTokenTime(dir));
    }
  }
  if (verdict.alive) return { kind: 'alive', session: ref, state };
  return requeue(ctx, file, noun, ref, dir, state, verdict.reason);
}

/**
 * When a claim without a usable session record was made: its Session line's time, else the
 * request file's modification time. A request deleted since it was read is a verdict, `gone`.
 */
async function claimedAt(file: string, ref: string): Promise<number | ClaimVerdict> {
  const fromRef = claimTime(ref);
  if (fromRef !== null) return fromRef;
  try {
    return (await stat(file)).mtimeMs;
  } catch (error) {
    if (isErrnoException(error) && (error.code === 'ENOENT' || error.code === 'ENOTDIR'))
      return { kind: 'gone' };
    return { kind: 'unknown', reason: `cannot stat ${file}: ${messageOf(error)}` };
  }
}

/**
 * A claimed request found under a new name (moved with `mv`): its session follows it when the
 * old name no longer carries that claim, so the claim ends (done, or requeued) at the new path,
 * and the agent can read the new path in its session directory. A copy, whose original still
 * carries the claim, is not followed.
 */
async function followMovedRequest(
  ctx: DaemonContext,
  dir: string,
  ref: string,
  from: string,
  to: string,
): Promise<'moved' | 'copy' | { unknown: string }> {
  const read = readRequestFile(from);
  if (read.kind === 'text' && sessionReference(read.file.text) === ref) return 'copy';
  if (read.kind !== 'text' && read.kind !== 'gone')
    return { unknown: readError(from, read).message };
  // Beside `.state.json`: the request's path now, for the agent (renamed into place whole).
  const path = sessionDir(dir).requestFile;
  await writeFile(`${path}.tmp`, `${to}\n`);
  await rename(`${path}.tmp`, path);
  // The claim moves whatever the session's status: it still ends at the new path.
  const moved = await transitionSession(
    dir,
    SESSION_STATUSES,
    'unchanged',
    { requestFile: to },
    { events: ctx.recordEvent, event: { event: 'request-moved', from }, requestFile: from },
  );
  if (moved) ctx.log('info', `${from} moved to ${to} while ${ref} runs; its claim moves with it`);
  return 'moved';
}

async function requeue(
  ctx: DaemonContext,
  file: string,
  noun: string,
  ref: string,
  dir: string,
  state: SessionState | null,
  reason: string,
): Promise<ClaimVerdict | typeof CHANGED> {
  let attempt = 1;
  await pausepoint('before-requeue');
  // A claim of another host, judged dead by its stale heartbeat, may still have a live agent
  // there (a slow shared filesystem): never sent back without a human, whatever --retries says.
  const remote = state !== null && isOpen(state.status) && state.host !== ctx.probe.hostname();
  const policy = { ...retryPolicy(ctx.options), ...(remote ? { retries: 0 } : {}) };
  // Read first: it waits for the print run's last lines, which the failure is judged from.
  const exit = state?.status === 'exited' ? await exitResult(dir, state) : null;
  const failure: Failure = remote ? { kind: 'agent', reason } : await failureOf(dir, state, reason);
  const now = ctx.now();
  if (failure.kind === 'usage-limit') {
    // Paused before the item goes back, so no claim starts in between.
    const until = limitResumesAt(failure, now, policy);
    await pauseForLimit(ctx, until, `usage limit, resets at ${until.toISOString()}`, {
      file,
      noun,
      session: ref,
    });
  }
  let decision: RequeueDecision | null = null;
  try {
    await editFile(file, (text) => {
      const records = recoveryRecords(text);
      const attempts = attemptsSoFar(records);
      attempt = attempts + 1;
      decision = decideRequeue(
        failure,
        {
          attempts,
          launchFailures: failuresInARow(records, 'launch'),
          usageLimits: failuresInARow(records, 'usage-limit'),
        },
        policy,
        now,
      );
      return requeueEdit(text, noun, ref, {
        date: now.toISOString(),
        reason: decision.reason,
        priorSession: `${ref}/`,
        attempt,
        back: decision.tag,
        failure: decision.failure,
        notBefore: decision.notBefore?.toISOString() ?? null,
      });
    });
  } catch (error) {
    if (error instanceof PreconditionError) return CHANGED;
    throw new EngineError(
      `could not requeue ${file} (#claimed-${noun}, ${ref}): ${messageOf(error)}`,
      { cause: error },
    );
  }
  const decided = decision as unknown as RequeueDecision;
  const why = decided.reason;
  if (state) {
    const events = ctx.recordEvent;
    // The wrapper records its exit in `.exit`: the record (and the event log, once) hears of it
    // on its way to `abandoned`, unless the daemon copied it in already.
    if (exit !== null) {
      const patch = { ...state, ...exit };
      await transitionSession(dir, ['starting', 'running'], 'exited', patch, {
        events,
        event: { event: 'exited', exitCode: state.exitCode },
      });
    }
    await transitionSession(
      dir,
      ['starting', 'running', 'exited'],
      'abandoned',
      { ...state, reason: why, endedAt: state.endedAt ?? ctx.now().toISOString() },
      { events },
    );
  }
  const real = await realpath(file).catch(() => file);
  ctx.log('warn', `requeued ${file} to #${decided.tag}-${noun}: ${why}`, {
    file,
    noun,
    session: ref,
  });
  await ctx.recordEvent({
    event: 'requeued',
    file: real,
    noun,
    session: ref,
    reason: why,
    attempt,
    to: `#${decided.tag}-${noun}`,
    ...(decided.notBefore ? { notBefore: decided.notBefore.toISOString() } : {}),
  });
  if (decided.gaveUp)
    await ctx.recordEvent({ event: 'gave-up', file: real, noun, session: ref, reason: why });
  return { kind: 'requeued', reason: why };
}
