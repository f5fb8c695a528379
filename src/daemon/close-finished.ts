/**
 * Closing finished interactive agents. Interactive Claude Code does not exit when its work is
 * done, nor when it hits a usage limit (it shows the message and waits). Once its item shows
 * `#done-X` (the session's `.done` mark), it stays open `closeAfterDoneMs` (`--close-after-done`),
 * a human may want to read the end of it; once its hooks report `limited`, it is closed at once,
 * so its claim goes back to the queue (src/daemon/limited-agent.ts). Either way it is asked to
 * exit (Ctrl-C twice, typed into its terminal), and is signalled after a grace period: SIGTERM,
 * then SIGKILL after another, each step once. Its transcript stays.
 *
 * No key may answer a question the agent asks a human (a permission prompt takes Enter as "Yes"):
 * it is asked only while its hooks say it sits at its own prompt, nothing asked (`atOwnPrompt`),
 * checked again right before the keys; otherwise (it waits for an answer, works, or its state is
 * unknown) the ask is skipped and SIGTERM comes at once: a signal denies, never grants. And the
 * keys are Ctrl-C only, which a permission prompt ignores, should one appear after the check.
 *
 * Only the `claude` profile is closed: a `claude-print` run exits on its own, and engine knows no
 * polite way to end a custom agent, which owns its lifetime. Every deadline derives from the
 * session's files (the mtimes of `.done` and of each step's mark, the limited state's `at`), and
 * each step is marked before it is taken, so a daemon restarted meanwhile closes it on time and
 * never takes a step twice; the agent state is read again at each step, so an agent that left
 * `limited` (a human took it over) is no longer closed for it. The agent is signalled only while
 * its recorded identity (pid and start time, this boot, this host) is alive: never a process that
 * reused its pid.
 *
 * `engine close` (src/actions/close-item.ts) closes a finished agent now: it marks the request
 * (`.close-requested`), which makes the close due at once for it and for a daemon alike, and takes
 * the same steps through `takeCloseStep`, so each step is taken once whoever takes it.
 */
import {
  checkLiveness,
  type ProcessIdentity,
  type ProcProbe,
} from '../process/process-identity.js';
import type { Runner } from '../runners/runner.js';
import { atOwnPrompt, readAgentState, type AgentState } from '../agents/agent-state.js';
import type { EventInput } from '../sessions/event-log.js';
import {
  closeMarkTime,
  closeRequestTime,
  doneMarkTime,
  supersededTime,
  takeCloseMark,
} from '../sessions/session-markers.js';
import type { SessionState } from '../sessions/session-state.js';
import type { LogFn } from './daemon-context.js';
import type { DaemonShared } from './daemon-shared.js';

/** Time from the polite ask to SIGTERM, and from SIGTERM to SIGKILL. */
export const CLOSE_GRACE_MS = 10_000;

/**
 * The terminal input that asks interactive Claude Code to exit: Ctrl-C twice within a second, at
 * its prompt (the first clears a half-typed prompt). Sent together, never split by a pause.
 */
const EXIT_KEYS = [{ key: 'C-c', repeat: 2 }] as const;

export interface CloseFacts {
  /** The session's agent profile (`.state.json` `agent`). */
  agent: string | undefined;
  /** When the item was seen done (`.done`'s mtime); null: not done. */
  doneAtMs: number | null;
  /** When its hooks reported a usage limit (the `limited` state's `at`); null: not limited now. */
  limitedAtMs: number | null;
  /** When a human asked to close it now (`.close-requested`'s mtime); null or absent: nobody did. */
  requestedAtMs?: number | null;
  /**
   * When its item was found claimed by another lease (`.superseded`'s mtime): its work can no
   * longer count, so it is closed whatever its profile. Null or absent: it was not.
   */
  supersededAtMs?: number | null;
  /** When the agent was asked to exit (`.close-asked`'s mtime); null: not asked. */
  askedAtMs: number | null;
  /** When it was sent SIGTERM (`.close-term`'s mtime); null: not sent. */
  termAtMs: number | null;
  /** When it was sent SIGKILL (`.close-kill`'s mtime); null: not sent. */
  killAtMs: number | null;
  /** Whether its hooks say it sits at its own prompt, nothing asked: keys answer no question. */
  atPrompt: boolean;
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
  /**
   * Send `signal` now; the next step, if it is still there, comes at `nextAtMs`. `skipsAsk`: the
   * first step of the close, instead of an ask that could answer a question.
   */
  | { kind: 'signal'; signal: 'SIGTERM' | 'SIGKILL'; nextAtMs: number; skipsAsk: boolean }
  /** Every step was taken, SIGKILL last: nothing is left to do. */
  | { kind: 'exhausted' };

/**
 * A step taken this long before the time the close is due was for an earlier reason (a limit a
 * human then took over): it does not count. File times lag the clock by a tick or so.
 */
const STALE_ASK_MS = 1000;

/** When the agent is due to be asked to exit; null: never (another profile, or no reason). */
export function closeDueAt(
  facts: Pick<
    CloseFacts,
    'agent' | 'doneAtMs' | 'limitedAtMs' | 'closeAfterMs' | 'requestedAtMs' | 'supersededAtMs'
  >,
): number | null {
  const { agent, doneAtMs, limitedAtMs, closeAfterMs, requestedAtMs, supersededAtMs } = facts;
  // Any profile: a signal ends it, and no key is typed into an agent without hooks.
  if (supersededAtMs != null) return supersededAtMs;
  if (agent !== 'claude') return null;
  const dueAt = [
    ...(limitedAtMs !== null ? [limitedAtMs] : []),
    ...(requestedAtMs != null ? [requestedAtMs] : []),
    ...(doneAtMs !== null && closeAfterMs > 0 ? [doneAtMs + closeAfterMs] : []),
  ];
  return dueAt.length === 0 ? null : Math.min(...dueAt);
}

/** Whether a step taken at `takenAtMs` is one of the close due at `askAt`. */
function stepCounts(takenAtMs: number | null, askAt: number): takenAtMs is number {
  return takenAtMs !== null && takenAtMs >= askAt - STALE_ASK_MS;
}

/**
 * What to do about a session's agent now: a pure function of its files' times, its hooks' state and
 * the clock. Ask (only at its own prompt, else SIGTERM at once), SIGTERM a grace period after the
 * ask, SIGKILL a grace period after the SIGTERM: each once, as each step's mark says it was taken.
 */
export function closeStep(facts: CloseFacts): CloseStep {
  const { askedAtMs, termAtMs, killAtMs, graceMs, nowMs } = facts;
  const askAt = closeDueAt(facts);
  if (askAt === null) return { kind: 'never' };
  if (nowMs < askAt) return { kind: 'wait', atMs: askAt };
  if (stepCounts(killAtMs, askAt)) return { kind: 'exhausted' };
  if (stepCounts(termAtMs, askAt)) {
    const killAt = termAtMs + graceMs;
    if (nowMs < killAt) return { kind: 'wait', atMs: killAt };
    return {
      kind: 'signal',
      signal: 'SIGKILL',
      nextAtMs: Number.POSITIVE_INFINITY,
      skipsAsk: false,
    };
  }
  if (!stepCounts(askedAtMs, askAt)) {
    if (facts.atPrompt) return { kind: 'ask' };
    return { kind: 'signal', signal: 'SIGTERM', nextAtMs: nowMs + graceMs, skipsAsk: true };
  }
  const termAt = askedAtMs + graceMs;
  if (nowMs < termAt) return { kind: 'wait', atMs: termAt };
  return { kind: 'signal', signal: 'SIGTERM', nextAtMs: nowMs + graceMs, skipsAsk: false };
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
  const { ctx } = shared;
  const closer: Closer = {
    log: ctx.log,
    recordEvent: (event) => ctx.recordEvent(event),
    now: () => ctx.now(),
    probe: ctx.probe,
    runner: ctx.runner,
    closeAfterDoneMs: ctx.options.closeAfterDoneMs,
    tmuxSocket: ctx.options.tmuxSocket,
    warnOnce: (key, message) => shared.warnOnce(key, message),
  };
  try {
    return await takeCloseStep(closer, dir, state);
  } catch (error) {
    ctx.log('error', `closing the agent of ${state.sessionRef}: ${String(error)}`);
    return ctx.now().getTime() + CLOSE_GRACE_MS;
  }
}

/** What taking a step of a close needs: the daemon's context, or `engine close`'s. */
export interface Closer {
  log: LogFn;
  recordEvent(event: EventInput): Promise<void>;
  now(): Date;
  probe: ProcProbe;
  /** The runner that reaches the agent's terminal (tmux): to type the ask, count its viewers. */
  runner: Pick<Runner, 'kind' | 'typeInto' | 'viewers'>;
  closeAfterDoneMs: number;
  tmuxSocket: string | null;
  warnOnce(key: string, message: string): void;
}

/**
 * Takes the step `closeStep` says for the session in `dir` now; resolves to when to look again
 * (ms since the epoch; Infinity: never, nothing is left to do or nothing runs).
 */
export async function takeCloseStep(
  closer: Closer,
  dir: string,
  state: SessionState,
): Promise<number> {
  const facts = await readCloseFacts(closer, dir, state);
  const step = closeStep(facts);
  if (step.kind === 'never' || step.kind === 'exhausted') return Number.POSITIVE_INFINITY;
  if (step.kind === 'wait') return step.atMs;
  const identity = agentIdentity(state);
  if (identity === null || checkLiveness(identity, closer.probe) !== 'alive')
    return Number.POSITIVE_INFINITY;
  const close: Close = {
    closer,
    dir,
    state,
    identity,
    facts,
    why: closeReason(facts),
    // A mark older than this was made for an earlier reason: the step is taken again.
    staleBefore: (closeDueAt(facts) as number) - STALE_ASK_MS,
  };
  const target = terminalOf(closer, state);
  // A human attached to the window of a finished agent is reading or talking to it (answering its
  // question, maybe): its close waits until nobody views it (a limited agent is closed all the
  // same: its item must go back).
  const opens = step.kind === 'ask' || step.skipsAsk;
  const waitsForViewer = close.why === 'done' || close.why === 'superseded';
  if (opens && waitsForViewer && target && (await viewedNow(closer, target))) {
    closer.warnOnce(
      `close-viewed:${state.sessionRef}`,
      `${state.sessionRef}: ${close.why}, but its window is being viewed; it is closed once nobody views it`,
    );
    return closer.now().getTime() + CLOSE_GRACE_MS;
  }
  if (step.kind === 'ask') {
    await askToExit(close, target);
    return closer.now().getTime() + CLOSE_GRACE_MS;
  }
  await sendSignal(close, step);
  return step.nextAtMs;
}

/**
 * Why the agent is closed: `asked` by a human (`engine close`); `superseded`: its item is another
 * lease's now (its work can no longer count).
 */
type CloseReason = 'usage limit' | 'done' | 'asked' | 'superseded';

/** The reason of the close due first: the one its marks and events name. */
function closeReason(facts: CloseFacts): CloseReason {
  if (facts.supersededAtMs != null) return 'superseded';
  if (facts.limitedAtMs !== null) return 'usage limit';
  return facts.requestedAtMs != null ? 'asked' : 'done';
}

/** The facts of a close, and the agent state they were read from. */
type ReadFacts = CloseFacts & { agentState: AgentState | null };

/** One close being taken a step further. */
interface Close {
  closer: Closer;
  dir: string;
  state: SessionState;
  identity: ProcessIdentity;
  facts: ReadFacts;
  why: CloseReason;
  staleBefore: number;
}

async function readCloseFacts(ctx: Closer, dir: string, state: SessionState): Promise<ReadFacts> {
  const claude = state.agent === 'claude';
  const agentState = claude ? await readAgentState(dir) : null;
  return {
    agentState,
    agent: state.agent,
    doneAtMs: claude ? await doneMarkTime(dir) : null,
    limitedAtMs:
      agentState?.state === 'limited' ? Date.parse(agentState.at) || ctx.now().getTime() : null,
    requestedAtMs: claude ? await closeRequestTime(dir) : null,
    supersededAtMs: await supersededTime(dir),
    askedAtMs: await closeMarkTime(dir, 'ask'),
    termAtMs: await closeMarkTime(dir, 'SIGTERM'),
    killAtMs: await closeMarkTime(dir, 'SIGKILL'),
    atPrompt: atOwnPrompt(agentState),
    closeAfterMs: ctx.closeAfterDoneMs,
    graceMs: CLOSE_GRACE_MS,
    nowMs: ctx.now().getTime(),
  };
}

/** The agent's recorded identity, or null when the record lacks one. */
function agentIdentity(state: SessionState): ProcessIdentity | null {
  return state.agentPid !== null && state.agentStartTicks !== null && state.bootId !== null
    ? {
        pid: state.agentPid,
        startTicks: state.agentStartTicks,
        bootId: state.bootId,
        host: state.host,
      }
    : null;
}

/** Asks the agent to exit, unless another caller did (the mark is taken once per close). */
async function askToExit(close: Close, target: string | null): Promise<void> {
  const { closer: ctx, dir, state, why } = close;
  const session = state.sessionRef;
  if (!(await takeCloseMark(dir, 'ask', close.staleBefore))) return;
  ctx.log('info', askLine(close));
  await ctx.recordEvent({
    event: 'agent-closing',
    session,
    file: state.requestFile,
    step: 'ask',
    reason: why,
  });
  if (!target) return; // Not reached, it is signalled after the grace period all the same.
  // The hooks may have changed since they were read: checked again right before the keys.
  const mayType = async () =>
    atOwnPrompt(await readAgentState(dir)) && checkLiveness(close.identity, ctx.probe) === 'alive';
  const typed = await ctx.runner.typeInto?.(target, EXIT_KEYS, mayType).catch((error: unknown) => {
    ctx.log('warn', `${session}: cannot type Ctrl-C into its pane: ${String(error)}`);
    return true;
  });
  if (typed === false)
    ctx.log(
      'info',
      `${session}: nothing typed: its agent left its prompt (or its pane is gone); it is signalled after the grace period`,
    );
}

/** Sends the step's signal to the agent, unless another caller did (each mark is taken once). */
async function sendSignal(
  close: Close,
  step: { signal: 'SIGTERM' | 'SIGKILL'; skipsAsk: boolean },
): Promise<void> {
  const { closer: ctx, dir, state, why, identity } = close;
  const { signal } = step;
  if (!(await takeCloseMark(dir, signal, close.staleBefore))) return;
  const agentState = close.facts.agentState?.state ?? 'unknown';
  ctx.log(
    'warn',
    step.skipsAsk
      ? `${state.sessionRef}: closing its agent (pid ${identity.pid}, ${why}) without keys, since ${notAtPrompt(close.facts)}: ${signal}`
      : `${state.sessionRef}: its agent (pid ${identity.pid}) did not exit ${signal === 'SIGKILL' ? 'on SIGTERM' : 'when asked'}; ${signal}`,
  );
  await ctx.recordEvent({
    event: 'agent-closing',
    session: state.sessionRef,
    file: state.requestFile,
    step: signal,
    reason: why,
    ...(step.skipsAsk ? { agentState } : {}),
  });
  try {
    process.kill(identity.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The log line of an ask, saying why the agent is asked now. */
function askLine({ closer, state, facts, why }: Close): string {
  const session = state.sessionRef;
  if (why === 'usage limit')
    return `${session}: its agent hit a usage limit and waits; asking it to exit, so its item goes back to the queue`;
  if (why === 'asked')
    return `${session}: done; engine close asked to close it now; asking its agent to exit`;
  if (why === 'superseded')
    return `${session}: its item is claimed by another lease now, so its work cannot count; asking its agent to exit`;
  return `${session}: done since ${new Date(facts.doneAtMs ?? 0).toISOString()}, --close-after-done ${closer.closeAfterDoneMs / 60_000} min passed; asking its agent to exit`;
}

/** Why an agent not at its prompt is not asked (a key could answer its question), for the log. */
function notAtPrompt({ agent, agentState }: ReadFacts): string {
  if (agent !== 'claude') return `engine knows no polite way to end a ${agent ?? 'custom'} agent`;
  if (agentState === null) return 'its hooks reported no state (it may be asking something)';
  if (agentState.state === 'waiting')
    return `it waits for an answer (${agentState.detail ?? agentState.event})`;
  if (agentState.state === 'working') return 'it is working (a question may come at any moment)';
  return `its hooks say ${agentState.state}`;
}

/** Whether a terminal shows the window now; not known (an error) counts as not viewed. */
async function viewedNow(closer: Closer, target: string): Promise<boolean> {
  const viewers = await closer.runner.viewers?.(target).catch(() => 0);
  return (viewers ?? 0) > 0;
}

/**
 * The tmux pane of the session's terminal, when this daemon's runner reaches it: a pane id names a
 * pane of one server only, so the session must have run on this runner's server. A pty agent is
 * not asked (its terminal is not in the record): it is signalled after the grace period.
 */
function terminalOf(closer: Closer, state: SessionState): string | null {
  const { runner } = closer;
  const tmux = state.tmux;
  if (state.runner !== 'tmux' || runner.kind !== 'tmux' || !tmux?.pane) return null;
  return tmux.socket === closer.tmuxSocket ? tmux.pane : null;
}
