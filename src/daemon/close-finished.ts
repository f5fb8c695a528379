/**
 * Closing finished interactive agents. Interactive Claude Code does not exit when its work is
 * done, nor when it hits a usage limit (it shows the message and waits). Once its item shows
 * `#done-X` (the session's `.done` mark), it stays open `closeAfterDoneMs` (`--close-after-done`),
 * a human may want to read the end of it; once its hooks report `limited`, it is closed at once,
 * so its claim goes back to the queue (src/daemon/limited-agent.ts). Either way it is asked to
 * exit (Ctrl-C, which clears a half-typed prompt, then `/exit` and Enter, typed into its
 * terminal), and is signalled after a grace period: SIGTERM, then SIGKILL after another. Its
 * transcript stays.
 *
 * Only the `claude` profile is closed: a `claude-print` run exits on its own, and engine knows no
 * polite way to end a custom agent, which owns its lifetime. Every deadline derives from the
 * session's files (the mtimes of `.done` and `.close-asked`, the limited state's `at`), so a daemon
 * restarted meanwhile closes it on time; the agent state is read again at each step, so an agent
 * that left `limited` (a human took it over) is no longer closed for it. The agent is signalled only while its recorded identity (pid and start time,
 * this boot, this host) is alive: never a process that reused its pid.
 */
import { checkLiveness } from '../process/process-identity.js';
import { readAgentState } from '../sessions/agent-state.js';
import {
  closeAskedTime,
  doneMarkTime,
  markCloseAsked,
  renewCloseAsked,
} from '../sessions/session-markers.js';
import type { SessionState } from '../sessions/session-state.js';
import type { DaemonShared } from './daemon-shared.js';

/** Time from the polite ask to SIGTERM, and from SIGTERM to SIGKILL. */
export const CLOSE_GRACE_MS = 10_000;

/** The terminal input that asks interactive Claude Code to exit. */
const EXIT_KEYS = [{ key: 'C-c' }, { text: '/exit' }, { key: 'Enter' }] as const;

export interface CloseFacts {
  /** The session's agent profile (`.state.json` `agent`). */
  agent: string | undefined;
  /** When the item was seen done (`.done`'s mtime); null: not done. */
  doneAtMs: number | null;
  /** When its hooks reported a usage limit (the `limited` state's `at`); null: not limited now. */
  limitedAtMs: number | null;
  /** When the agent was asked to exit (`.close-asked`'s mtime); null: not asked. */
  askedAtMs: number | null;
  /** 0: never closed once done (a limited agent is closed all the same). */
  closeAfterMs: number;
  graceMs: number;
  nowMs: number;
}

export type CloseStep =
  /** Not for engine to close: another profile, or the item is neither done (with closing on) nor limited. */
  | { kind: 'never' }
  /** Nothing to do before `atMs`. */
  | { kind: 'wait'; atMs: number }
  /** Ask it to exit now. */
  | { kind: 'ask' }
  /** Send `signal` now; the next step, if it is still there, comes at `nextAtMs`. */
  | { kind: 'signal'; signal: 'SIGTERM' | 'SIGKILL'; nextAtMs: number };

/**
 * An ask made this long before the time it is due for was for an earlier reason (a limit a human
 * then took over): it does not count. File times lag the clock by a tick or so.
 */
const STALE_ASK_MS = 1000;

/** When the agent is due to be asked to exit; null: never (another profile, or no reason). */
export function closeDueAt(
  facts: Pick<CloseFacts, 'agent' | 'doneAtMs' | 'limitedAtMs' | 'closeAfterMs'>,
): number | null {
  const { agent, doneAtMs, limitedAtMs, closeAfterMs } = facts;
  if (agent !== 'claude') return null;
  const dueAt = [
    ...(limitedAtMs !== null ? [limitedAtMs] : []),
    ...(doneAtMs !== null && closeAfterMs > 0 ? [doneAtMs + closeAfterMs] : []),
  ];
  return dueAt.length === 0 ? null : Math.min(...dueAt);
}

/** Whether an ask made at `askedAtMs` is one for the close due at `askAt`. */
export function askCounts(askedAtMs: number | null, askAt: number): askedAtMs is number {
  return askedAtMs !== null && askedAtMs >= askAt - STALE_ASK_MS;
}

/** What to do about a session's agent now: a pure function of its files' times and the clock. */
export function closeStep(facts: CloseFacts): CloseStep {
  const { askedAtMs, graceMs, nowMs } = facts;
  const askAt = closeDueAt(facts);
  if (askAt === null) return { kind: 'never' };
  if (nowMs < askAt) return { kind: 'wait', atMs: askAt };
  if (!askCounts(askedAtMs, askAt)) return { kind: 'ask' };
  const termAt = askedAtMs + graceMs;
  if (nowMs < termAt) return { kind: 'wait', atMs: termAt };
  const killAt = termAt + graceMs;
  if (nowMs < killAt) return { kind: 'signal', signal: 'SIGTERM', nextAtMs: killAt };
  return { kind: 'signal', signal: 'SIGKILL', nextAtMs: nowMs + graceMs };
}

/**
 * Takes the step `closeStep` says for the session in `dir` (its state as read now, still open),
 * and returns when to look again (ms since the epoch; Infinity: never). A failure is logged and
 * tried again at the next look: it must not stop the exit of the session being recorded.
 */
export async function closeFinished(
  shared: DaemonShared,
  dir: string,
  state: SessionState,
): Promise<number> {
  try {
    return await takeCloseStep(shared, dir, state);
  } catch (error) {
    shared.ctx.log('error', `closing the agent of ${state.sessionRef}: ${String(error)}`);
    return shared.ctx.now().getTime() + CLOSE_GRACE_MS;
  }
}

async function takeCloseStep(
  shared: DaemonShared,
  dir: string,
  state: SessionState,
): Promise<number> {
  const { ctx } = shared;
  const doneAtMs = state.agent === 'claude' ? await doneMarkTime(dir) : null;
  const agentState = state.agent === 'claude' ? await readAgentState(dir) : null;
  const limitedAtMs =
    agentState?.state === 'limited' ? Date.parse(agentState.at) || ctx.now().getTime() : null;
  const why = limitedAtMs !== null ? 'usage limit' : 'done';
  const facts: CloseFacts = {
    agent: state.agent,
    doneAtMs,
    limitedAtMs,
    askedAtMs: await closeAskedTime(dir),
    closeAfterMs: ctx.options.closeAfterDoneMs,
    graceMs: CLOSE_GRACE_MS,
    nowMs: ctx.now().getTime(),
  };
  const step = closeStep(facts);
  if (step.kind === 'never') return Number.POSITIVE_INFINITY;
  if (step.kind === 'wait') return step.atMs;
  const identity =
    state.agentPid !== null && state.agentStartTicks !== null && state.bootId !== null
      ? {
          pid: state.agentPid,
          startTicks: state.agentStartTicks,
          bootId: state.bootId,
          host: state.host,
        }
      : null;
  if (identity === null || checkLiveness(identity, ctx.probe) !== 'alive')
    return Number.POSITIVE_INFINITY;
  const session = state.sessionRef;
  const target = terminalOf(shared, state);
  // A human attached to the window of a finished agent is reading or talking to it: its ask waits
  // until nobody views it (a limited agent is asked all the same: its item must go back).
  if (step.kind === 'ask' && why === 'done' && target && (await viewedNow(shared, target))) {
    shared.warnOnce(
      `close-viewed:${session}`,
      `${session}: done, but its window is being viewed; it is asked to exit once nobody views it`,
    );
    return ctx.now().getTime() + CLOSE_GRACE_MS;
  }
  if (step.kind === 'ask') {
    // The mark is made once; an ask that no longer counts (see askCounts) renews it.
    const askAt = closeDueAt(facts) as number;
    if ((await markCloseAsked(dir)) || (await renewCloseAsked(dir, askAt - STALE_ASK_MS))) {
      ctx.log(
        'info',
        limitedAtMs !== null
          ? `${session}: its agent hit a usage limit and waits; asking it to exit, so its item goes back to the queue`
          : `${session}: done since ${new Date(doneAtMs ?? 0).toISOString()}, --close-after-done ${ctx.options.closeAfterDoneMs / 60_000} min passed; asking its agent to exit`,
      );
      await ctx.recordEvent({
        event: 'agent-closing',
        session,
        file: state.requestFile,
        step: 'ask',
        reason: why,
      });
      // Not reached, it is signalled after the grace period all the same.
      if (target)
        await ctx.runner
          .typeInto?.(target, EXIT_KEYS)
          .catch((error: unknown) =>
            ctx.log('warn', `${session}: cannot type /exit: ${String(error)}`),
          );
    }
    return ctx.now().getTime() + CLOSE_GRACE_MS;
  }
  ctx.log(
    'warn',
    `${session}: its agent (pid ${identity.pid}) did not exit when asked; ${step.signal}`,
  );
  await ctx.recordEvent({
    event: 'agent-closing',
    session,
    file: state.requestFile,
    step: step.signal,
    reason: why,
  });
  try {
    process.kill(identity.pid, step.signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
  return step.nextAtMs;
}

/** Whether a terminal shows the window now; not known (an error) counts as not viewed. */
async function viewedNow(shared: DaemonShared, target: string): Promise<boolean> {
  const viewers = await shared.ctx.runner.viewers?.(target).catch(() => 0);
  return (viewers ?? 0) > 0;
}

/**
 * The tmux pane of the session's terminal, when this daemon's runner reaches it: a pane id names a
 * pane of one server only, so the session must have run on this runner's server. A pty agent is
 * not asked (its terminal is not in the record): it is signalled after the grace period.
 */
function terminalOf(shared: DaemonShared, state: SessionState): string | null {
  const { options, runner } = shared.ctx;
  const tmux = state.tmux;
  if (state.runner !== 'tmux' || runner.kind !== 'tmux' || !tmux?.pane) return null;
  return tmux.socket === options.tmuxSocket ? tmux.pane : null;
}
