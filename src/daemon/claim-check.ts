/**
 * Decides what a `#claimed-X` needs, from the files alone: the request file's tags and Session
 * line, and the session's `.state.json`. Dead claims are requeued (`#needs-X` + `## Recovery`)
 * in one compare-and-swap write, then the session is marked `abandoned`. A live agent is never
 * requeued, and a requeue first makes sure nothing of the session still runs.
 */
import { realpath, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { editFile } from '../files/tag-file.js';
import { readTextFile } from '../files/read-text-file.js';
import { PreconditionError } from '../errors.js';
import { isHeartbeatStale } from '../process/heartbeat.js';
import { checkLiveness, describeLiveness, isAlive } from '../process/process-identity.js';
import { carrierTags } from '../tags/edit-tags.js';
import { recoveryCount, requeueEdit, sessionReference } from '../tags/lifecycle-edits.js';
import { scanTags } from '../tags/scan-tags.js';
import { lifecycleTag } from '../tags/tag-name.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import {
  readSessionState,
  writeSessionState,
  type SessionState,
} from '../sessions/session-state.js';
import type { DaemonContext } from './daemon-context.js';

export type ClaimVerdict =
  | { kind: 'alive'; session: string; state: SessionState | null }
  | { kind: 'done' }
  | { kind: 'not-claimed' }
  | { kind: 'foreign'; reason: string }
  | { kind: 'requeued'; reason: string }
  | { kind: 'gone' };

/** Reads the request and its session, and requeues the claim when its agent is gone. */
export async function checkClaim(
  ctx: DaemonContext,
  file: string,
  noun: string,
): Promise<ClaimVerdict> {
  let text: string;
  try {
    text = (await readTextFile(file)).file.text;
  } catch {
    return { kind: 'gone' };
  }
  const tags = new Set(carrierTags(scanTags(text)).map((o) => o.tag));
  if (!tags.has(lifecycleTag('claimed', noun))) {
    return tags.has(lifecycleTag('done', noun)) ? { kind: 'done' } : { kind: 'not-claimed' };
  }
  const ref = sessionReference(text);
  if (!ref)
    return {
      kind: 'foreign',
      reason: 'claimed without a **Session**: line (not claimed by the daemon)',
    };
  const dir = resolveSessionRef(ctx.options.root, ref);
  if (!dir)
    return {
      kind: 'foreign',
      reason: `Session line '${ref}' is not a session under ${ctx.options.root}`,
    };

  const read = await readSessionState(dir);
  const graceOver = async (since: number) => ctx.now().getTime() - since > ctx.options.claimGraceMs;
  if ('missing' in read || 'malformed' in read) {
    const since = claimTime(ref) ?? (await stat(file)).mtimeMs;
    if (!(await graceOver(since))) return { kind: 'alive', session: ref, state: null };
    const why =
      'missing' in read
        ? `no session record ${Math.round(ctx.options.claimGraceMs / 1000)} s after the claim (the daemon stopped between claim and spawn)`
        : `session record is malformed (${read.malformed})`;
    return requeue(ctx, file, noun, ref, dir, null, why);
  }
  const state = read.state;
  const reason = await deathReason(ctx, state, ref, graceOver);
  if (reason === null) return { kind: 'alive', session: ref, state };
  return requeue(ctx, file, noun, ref, dir, state, reason);
}

/** Null while the session may still be working; otherwise why it is dead. */
async function deathReason(
  ctx: DaemonContext,
  state: SessionState,
  ref: string,
  graceOver: (since: number) => Promise<boolean>,
): Promise<string | null> {
  const noun = state.noun;
  if (state.status === 'exited') {
    return `agent exited with code ${state.exitCode ?? 'unknown'} without marking #done-${noun}`;
  }
  if (state.status === 'abandoned') return state.reason ?? 'session was abandoned';
  if (state.pid === null || state.startTicks === null || state.bootId === null) {
    const since = Date.parse(state.startedAt) || claimTime(ref) || 0;
    return (await graceOver(since)) ? `the agent never started (${ref} stayed 'starting')` : null;
  }
  if (state.host !== hostname()) {
    return isHeartbeatStale(state.lastHeartbeat ?? undefined, ctx.now(), ctx.options.staleAfterMs)
      ? `no heartbeat from host ${state.host} since ${state.lastHeartbeat ?? 'never'}`
      : null;
  }
  const wrapper = {
    pid: state.pid,
    startTicks: state.startTicks,
    bootId: state.bootId,
    host: state.host,
  };
  const wrapperLiveness = checkLiveness(wrapper);
  if (isAlive(wrapperLiveness)) return null;
  if (state.agentPid !== null && state.agentStartTicks !== null) {
    const agent = {
      pid: state.agentPid,
      startTicks: state.agentStartTicks,
      bootId: state.bootId,
      host: state.host,
    };
    if (isAlive(checkLiveness(agent))) return null;
  }
  return `agent wrapper ${describeLiveness(wrapper, wrapperLiveness)}`;
}

async function requeue(
  ctx: DaemonContext,
  file: string,
  noun: string,
  ref: string,
  dir: string,
  state: SessionState | null,
  reason: string,
): Promise<ClaimVerdict> {
  if (state?.tmux?.pane && ctx.runner.kind === 'tmux')
    await ctx.runner.stop(state.tmux.pane).catch(() => undefined);
  let attempt = 1;
  try {
    await editFile(file, (text) => {
      attempt = recoveryCount(text) + 1;
      return requeueEdit(text, noun, ref, {
        date: ctx.now().toISOString(),
        reason,
        priorSession: `${ref}/`,
        attempt,
      });
    });
  } catch (error) {
    if (error instanceof PreconditionError) return { kind: 'not-claimed' };
    throw error;
  }
  if (state) {
    await writeSessionState(dir, {
      ...state,
      status: 'abandoned',
      reason,
      endedAt: state.endedAt ?? ctx.now().toISOString(),
    });
  }
  ctx.log('warn', `requeued ${file}: ${reason}`, { file, noun, session: ref });
  await ctx.recordEvent({
    event: 'requeued',
    file: await realpath(file).catch(() => file),
    noun,
    session: ref,
    reason,
    attempt,
  });
  return { kind: 'requeued', reason };
}

/** The claim time encoded in a session name (`sessions/2026_11_22_074512_...`). */
export function claimTime(ref: string): number | null {
  const m = /(\d{4})_(\d{2})_(\d{2})_(\d{2})(\d{2})(\d{2})_/.exec(ref);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return new Date(y as number, (mo as number) - 1, d, h, mi, s).getTime();
}
