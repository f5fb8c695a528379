/**
 * Decides what a `#claimed-X` needs, from the files alone: the request file's tags and Session
 * line, and the session's `.state.json`. Dead claims are requeued (`#needs-X` + `## Recovery`)
 * in one compare-and-swap write, then the session is marked `abandoned`. A claim is requeued only
 * when neither its wrapper nor its agent process is alive, so a requeue never leaves an agent
 * running; anything that cannot be judged (I/O errors, records of another tool) is left alone.
 */
import { realpath, rename, stat, writeFile } from 'node:fs/promises';
import { readError } from '../files/read-text-file.js';
import { EngineError, isErrnoException, messageOf, PreconditionError } from '../errors.js';
import {
  decideRequeue,
  limitResumesAt,
  type Failure,
  type RequeueDecision,
  type RetryPolicy,
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
import { claimStoreOf } from './claim-store.js';
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
  /** Another host holds the claim's lease (git claims): nothing of it runs here. */
  | { kind: 'elsewhere'; host: string }
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

/** A claim the daemon made: its request, noun, Session line and session directory. */
interface DaemonClaim {
  ctx: DaemonContext;
  file: string;
  noun: string;
  ref: string;
  dir: string;
}

async function judgeClaim(
  ctx: DaemonContext,
  file: string,
  noun: string,
): Promise<ClaimVerdict | typeof CHANGED> {
  const claim = await claimIn(ctx, file, noun);
  if ('kind' in claim) return claim;
  // Where claims are shared (git), its lease says whose it is before any process here is asked.
  const holder = await claimStoreOf(ctx).judgeHolder(file, noun, claim.ref);
  if (holder.kind === 'elsewhere' || holder.kind === 'unknown') return holder;
  const read = await readSessionState(claim.dir);
  if ('error' in read) return { kind: 'unknown', reason: `${claim.dir}: ${read.error}` };
  if ('malformed' in read) return judgeMalformed(claim, read.malformed);
  if ('missing' in read)
    return holder.kind === 'taken-over'
      ? requeue(claim, null, holder.reason)
      : judgeUnrecordedClaim(claim, null);
  return judgeRecorded(claim, read.state);
}

/**
 * The session the file's claim on `noun` names now; null when it carries no daemon's claim;
 * undefined when that cannot be told now (the file gone, as in git's rewrite, or unreadable).
 */
export async function claimedBy(
  ctx: DaemonContext,
  file: string,
  noun: string,
): Promise<string | null | undefined> {
  const claim = await claimIn(ctx, file, noun);
  if ('ref' in claim) return claim.ref;
  return claim.kind === 'gone' || claim.kind === 'unknown' ? undefined : null;
}

/** The daemon's claim on `noun` the file carries now, or the verdict when there is none. */
async function claimIn(
  ctx: DaemonContext,
  file: string,
  noun: string,
): Promise<DaemonClaim | ClaimVerdict> {
  const request = ctx.readRequest(file);
  if (request.kind === 'gone') return { kind: 'gone' };
  if (request.kind !== 'text') return { kind: 'unknown', reason: readError(file, request).message };
  let scan;
  try {
    scan = await ctx.scan(request.file.text);
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
  if (!ref) return foreign('claimed without a **Session**: line (not claimed by the daemon)');
  const dir = resolveSessionRef(ctx.options.root, ref);
  if (!dir) return foreign(`Session line '${ref}' is not a session under ${ctx.options.root}`);
  // A Session line left by a finished attempt (the agent's done swap keeps it) does not make a
  // later claim, by a human or the next skill, the daemon's: never requeue that.
  if (await isSessionDone(dir))
    return foreign(
      `Session line names ${ref}, a session that already finished this item: the claim is not the daemon's`,
    );
  return { ctx, file, noun, ref, dir };
}

const foreign = (reason: string): ClaimVerdict => ({ kind: 'foreign', reason });

/**
 * No agent can run before its wrapper takes the start token: without one, requeueing is safe.
 * With one, an agent may be running that nothing identifies any more: leave it to a human.
 */
async function judgeMalformed(
  claim: DaemonClaim,
  malformed: string,
): Promise<ClaimVerdict | typeof CHANGED> {
  if ((await startTokenTime(claim.dir)) !== null)
    return foreign(
      `${sessionDir(claim.dir).state} is malformed (${malformed}) and an agent may be running`,
    );
  return judgeUnrecordedClaim(
    claim,
    `session record is malformed (${malformed}) and no agent ever started`,
  );
}

/** A claim without a usable record: alive within its grace period, else requeued. */
async function judgeUnrecordedClaim(
  claim: DaemonClaim,
  reason: string | null,
): Promise<ClaimVerdict | typeof CHANGED> {
  const { ctx, file, ref } = claim;
  const since = await claimedAt(file, ref);
  if (typeof since !== 'number') return since;
  const verdict = judgeUnrecorded(since, ctx.now(), ctx.options);
  if (verdict.alive) return { kind: 'alive', session: ref, state: null };
  return requeue(claim, null, reason ?? verdict.reason);
}

/** A claim with its session's record: judged by its processes, requeued when they are gone. */
async function judgeRecorded(
  claim: DaemonClaim,
  recorded: SessionState,
): Promise<ClaimVerdict | typeof CHANGED> {
  const { ctx, file, noun, ref, dir } = claim;
  let state = recorded;
  const real = await realpath(file).catch(() => file);
  const other = foreign(
    `Session line points at ${ref}, which works on #${state.noun} of ${state.requestFile}`,
  );
  if (state.noun !== noun) return other;
  if (state.requestFile !== real) {
    const moved = await followMovedRequest(ctx, dir, ref, state.requestFile, real);
    if (moved === 'copy') return other;
    if (moved !== 'moved') return { kind: 'unknown', reason: moved.unknown };
    state = { ...state, requestFile: real };
  }
  const verdict = await judgeProcesses(claim, state);
  if (verdict === 'starting') return { kind: 'alive', session: ref, state };
  if (verdict.alive) return { kind: 'alive', session: ref, state: verdict.state };
  return requeue(claim, verdict.state, verdict.reason);
}

/**
 * The judge's verdict on the session's processes, and the record it was judged by; `starting`:
 * a wrapper took its start token just now.
 */
async function judgeProcesses(
  { ctx, dir }: DaemonClaim,
  recorded: SessionState,
): Promise<'starting' | (SessionVerdict & { state: SessionState })> {
  let state = recorded;
  const judge = (startTokenAt: number | null) => ({
    ...judgeSession(state, { startTokenAt }, ctx.now(), ctx.options, ctx.probe),
    state,
  });
  let verdict = judge(await startTokenTime(dir));
  // A wrapper that never recorded its pid may still be starting: take its start token first, so
  // it can no longer run an agent on the requeued item. If it took the token meanwhile, judge
  // again by the token's time.
  if (!verdict.alive && verdict.mayStart && !(await takeStartToken(dir))) {
    const taken = await startTokenTime(dir);
    if (taken === null) return 'starting';
    verdict = judge(taken);
  }
  // The wrapper writes `.exit` right before it exits: found gone after a read that came before
  // that write, it is read again, so the requeue gives the agent's exit as its reason.
  if (!verdict.alive && isOpen(state.status)) {
    const again = await readSessionState(dir);
    if ('state' in again && again.state.status === 'exited') {
      state = { ...again.state, requestFile: state.requestFile };
      verdict = judge(await startTokenTime(dir));
    }
  }
  return verdict;
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
  const read = ctx.readRequest(from);
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

/**
 * Sends a dead claim back (#needs-X, or #delegated-X for a retry) with its Recovery entry, in one
 * compare-and-swap write; then abandons the session. A usage limit pauses the queue first.
 */
async function requeue(
  claim: DaemonClaim,
  state: SessionState | null,
  reason: string,
): Promise<ClaimVerdict | typeof CHANGED> {
  const { ctx, dir } = claim;
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
    const { file, noun, ref } = claim;
    await pauseForLimit(ctx, until, `usage limit, resets at ${until.toISOString()}`, {
      file,
      noun,
      session: ref,
    });
  }
  const written = await writeRequeue(claim, failure, policy, now);
  if (written === CHANGED) return CHANGED;
  if (state) await abandon(claim, state, exit, written.decision.reason);
  await recordRequeue(claim, written);
  return { kind: 'requeued', reason: written.decision.reason };
}

interface Requeued {
  decision: RequeueDecision;
  attempt: number;
}

/** The requeue's one write; CHANGED when the file is no longer claimed by the session. */
async function writeRequeue(
  { ctx, file, noun, ref }: DaemonClaim,
  failure: Failure,
  policy: RetryPolicy,
  now: Date,
): Promise<Requeued | typeof CHANGED> {
  let written: Requeued | null = null;
  try {
    await claimStoreOf(ctx).requeue(file, noun, (text) => {
      const records = recoveryRecords(text);
      const attempts = attemptsSoFar(records);
      const decision = decideRequeue(
        failure,
        {
          attempts,
          launchFailures: failuresInARow(records, 'launch'),
          usageLimits: failuresInARow(records, 'usage-limit'),
        },
        policy,
        now,
      );
      written = { decision, attempt: attempts + 1 };
      return requeueEdit(text, noun, ref, {
        date: now.toISOString(),
        reason: decision.reason,
        priorSession: `${ref}/`,
        attempt: attempts + 1,
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
  return written as unknown as Requeued;
}

/**
 * The session ends `abandoned`. The wrapper records its exit in `.exit`: the record (and the
 * event log, once) hears of it on its way, unless the daemon copied it in already.
 */
async function abandon(
  { ctx, dir }: DaemonClaim,
  state: SessionState,
  exit: Awaited<ReturnType<typeof exitResult>> | null,
  why: string,
): Promise<void> {
  const events = ctx.recordEvent;
  if (exit !== null) {
    await transitionSession(
      dir,
      ['starting', 'running'],
      'exited',
      { ...state, ...exit },
      {
        events,
        event: { event: 'exited', exitCode: state.exitCode },
      },
    );
  }
  await transitionSession(
    dir,
    ['starting', 'running', 'exited'],
    'abandoned',
    { ...state, reason: why, endedAt: state.endedAt ?? ctx.now().toISOString() },
    { events },
  );
}

/** The requeue's log line and events (`requeued`, and `gave-up` when it went to a human for good). */
async function recordRequeue(
  { ctx, file, noun, ref }: DaemonClaim,
  { decision, attempt }: Requeued,
): Promise<void> {
  const why = decision.reason;
  const real = await realpath(file).catch(() => file);
  ctx.log('warn', `requeued ${file} to #${decision.tag}-${noun}: ${why}`, {
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
    to: `#${decision.tag}-${noun}`,
    ...(decision.notBefore ? { notBefore: decision.notBefore.toISOString() } : {}),
  });
  if (decision.gaveUp)
    await ctx.recordEvent({ event: 'gave-up', file: real, noun, session: ref, reason: why });
}
