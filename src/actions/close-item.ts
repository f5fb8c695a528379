/**
 * `engine close`: closes a finished interactive agent now (its item is `#done-X`, its `claude`
 * agent still open), by the daemon's own steps (daemon/close-finished.ts): asked with Ctrl-C only
 * while it sits at its own prompt, else SIGTERM at once; SIGTERM, then SIGKILL, each a grace
 * period after the step before. The `.close-requested` mark makes the close due now for a
 * running daemon too, and each step's mark makes it taken once, whoever takes it.
 */
import { CLOSE_GRACE_MS, takeCloseStep, type Closer } from '../daemon/close-finished.js';
import { EngineError } from '../errors.js';
import { checkLiveness, type ProcessIdentity } from '../process/process-identity.js';
import { TmuxRunner } from '../runners/tmux-runner.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { requestClose } from '../sessions/session-markers.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { sessionReference } from '../tags/lifecycle-edits.js';
import type { ActionContext } from './action-context.js';
import { agentIdentity, goneWithin } from './end-agent.js';
import { pickItem, readItemFile } from './item-of.js';

export interface Closed {
  file: string;
  noun: string;
  session: string;
  agentPid: number;
}

interface OpenAgent {
  closed: Closed;
  dir: string;
  state: SessionState;
  identity: ProcessIdentity;
}

export async function closeItem(
  ctx: ActionContext,
  file: string,
  noun: string | undefined,
): Promise<Closed> {
  const open = await openAgent(ctx, file, noun);
  const { closed, dir, state, identity } = open;
  await requestClose(dir);
  await ctx.recordEvent({ event: 'close-requested', reason: 'engine close', ...closed });
  const closer = closerOf(ctx, state);
  for (;;) {
    const next = await takeCloseStep(closer, dir, state);
    const waitMs = Number.isFinite(next) ? next - ctx.now().getTime() : CLOSE_GRACE_MS;
    if (await goneWithin(ctx, identity, Math.max(0, waitMs))) return closed;
    if (!Number.isFinite(next))
      throw new EngineError(
        `${state.sessionRef}: its agent (pid ${identity.pid}) still runs after SIGKILL`,
      );
  }
}

/** The finished item's open agent, or an error saying why there is none to close. */
async function openAgent(
  ctx: ActionContext,
  file: string,
  noun: string | undefined,
): Promise<OpenAgent> {
  const item = await readItemFile(file);
  const life = pickItem(
    item,
    ['done'],
    noun,
    "only a finished item's agent is closed (engine cancel ends a running one)",
  );
  const ref = sessionReference(item.text);
  const dir = ref === null ? null : resolveSessionRef(ctx.root, ref);
  if (ref === null || dir === null)
    throw new EngineError(
      `${file} is done, but names no session of engine's (no **Session**: line under ${ctx.root}/sessions): no agent to close`,
    );
  const read = await readSessionState(dir);
  if (!('state' in read) || read.state.noun !== life.noun)
    throw new EngineError(
      `${file} is done, but ${ref} holds no record of its #${life.noun} agent: no agent to close`,
    );
  const { state } = read;
  const identity = agentIdentity(state);
  if (identity !== null && identity.host !== ctx.probe.hostname())
    throw new EngineError(`${file}: its agent runs on host ${identity.host}; close it there`);
  if (identity === null || checkLiveness(identity, ctx.probe) !== 'alive')
    throw new EngineError(`${file} is done and its agent has exited: nothing to close`);
  if (state.agent !== 'claude')
    throw new EngineError(
      `${file}: its agent is a ${state.agent ?? 'custom'} agent, not interactive claude: engine close closes only those (a claude-print run exits on its own; a custom agent owns its lifetime)`,
    );
  const closed = { file: item.path, noun: life.noun, session: ref, agentPid: identity.pid };
  return { closed, dir, state, identity };
}

/** The close's means: the tmux server of the agent's window, to type the ask into. */
function closerOf(ctx: ActionContext, state: SessionState): Closer {
  const socket = state.tmux?.socket ?? null;
  const warned = new Set<string>();
  return {
    log: ctx.log,
    recordEvent: ctx.recordEvent,
    now: ctx.now,
    probe: ctx.probe,
    runner:
      state.runner === 'tmux' ? new TmuxRunner({ socket: socket ?? undefined }) : { kind: 'pty' },
    // The daemon's setting: a close it made due before the request is the same close for both.
    closeAfterDoneMs: ctx.closeAfterDoneMs,
    tmuxSocket: socket,
    warnOnce: (key, message) => {
      if (!warned.has(key)) ctx.log('warn', message);
      warned.add(key);
    },
  };
}
