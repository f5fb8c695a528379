/**
 * Closing finished interactive agents (`--close-after-done`). Interactive Claude Code does not
 * exit when its work is done; a human may want to read the end of it. Once its item shows
 * `#done-X` (the session's `.done` mark), it stays open `closeAfterDoneMs`, is then asked to exit
 * (Ctrl-C, which clears a half-typed prompt, then `/exit` and Enter, typed into its terminal), and
 * is signalled after a grace period: SIGTERM, then SIGKILL after another. Its transcript stays.
 *
 * Only the `claude` profile is closed: a `claude-print` run exits on its own, and engine knows no
 * polite way to end a custom agent, which owns its lifetime. Every deadline derives from the
 * session's files (the mtimes of `.done` and `.close-asked`), so a daemon restarted meanwhile
 * closes it on time. The agent is signalled only while its recorded identity (pid and start time,
 * this boot, this host) is alive: never a process that reused its pid.
 */
import { checkLiveness } from '../process/process-identity.js';
import { closeAskedTime, doneMarkTime, markCloseAsked } from '../sessions/session-markers.js';
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
  /** When the agent was asked to exit (`.close-asked`'s mtime); null: not asked. */
  askedAtMs: number | null;
  /** 0: never closed. */
  closeAfterMs: number;
  graceMs: number;
  nowMs: number;
}

export type CloseStep =
  /** Not for engine to close: another profile, closing turned off, or the item is not done. */
  | { kind: 'never' }
  /** Nothing to do before `atMs`. */
  | { kind: 'wait'; atMs: number }
  /** Ask it to exit now. */
  | { kind: 'ask' }
  /** Send `signal` now; the next step, if it is still there, comes at `nextAtMs`. */
  | { kind: 'signal'; signal: 'SIGTERM' | 'SIGKILL'; nextAtMs: number };

/** What to do about a session's agent now: a pure function of its files' times and the clock. */
export function closeStep(facts: CloseFacts): CloseStep {
  const { agent, doneAtMs, askedAtMs, closeAfterMs, graceMs, nowMs } = facts;
  if (agent !== 'claude' || closeAfterMs === 0 || doneAtMs === null) return { kind: 'never' };
  const askAt = doneAtMs + closeAfterMs;
  if (nowMs < askAt) return { kind: 'wait', atMs: askAt };
  if (askedAtMs === null) return { kind: 'ask' };
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
  const step = closeStep({
    agent: state.agent,
    doneAtMs,
    askedAtMs: await closeAskedTime(dir),
    closeAfterMs: ctx.options.closeAfterDoneMs,
    graceMs: CLOSE_GRACE_MS,
    nowMs: ctx.now().getTime(),
  });
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
  if (step.kind === 'ask') {
    if (await markCloseAsked(dir)) {
      ctx.log(
        'info',
        `${session}: done since ${new Date(doneAtMs ?? 0).toISOString()}, --close-after-done ${ctx.options.closeAfterDoneMs / 60_000} min passed; asking its agent to exit`,
      );
      await ctx.recordEvent({
        event: 'agent-closing',
        session,
        file: state.requestFile,
        step: 'ask',
      });
      const target = terminalOf(shared, state);
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
  });
  try {
    process.kill(identity.pid, step.signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
  return step.nextAtMs;
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
