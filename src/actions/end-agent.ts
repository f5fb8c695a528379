/**
 * Ends a session's agent by its recorded identity (pid + start ticks + boot id + host), never by
 * name: SIGTERM, then SIGKILL after a grace period, the identity checked right before each signal,
 * so a process that reused the pid is never signalled.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../errors.js';
import { checkLiveness, type ProcessIdentity } from '../process/process-identity.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import type { ActionContext } from './action-context.js';

/** How the agent ended: it was gone already, or after which signal. */
export type AgentEnd = 'gone' | 'SIGTERM' | 'SIGKILL';

function isRunning(ctx: ActionContext, identity: ProcessIdentity): boolean {
  return checkLiveness(identity, ctx.probe) === 'alive';
}

/** Polls until the process is gone, at most `ms`; true when it is. */
export async function goneWithin(
  ctx: ActionContext,
  identity: ProcessIdentity,
  ms: number,
): Promise<boolean> {
  const deadline = ctx.now().getTime() + ms;
  while (isRunning(ctx, identity)) {
    if (ctx.now().getTime() >= deadline) return false;
    await sleep(ctx.pollMs);
  }
  return true;
}

/** Sends `signal` while the identity is still the process that runs; false when it is gone. */
function signalIfRunning(
  ctx: ActionContext,
  identity: ProcessIdentity,
  signal: 'SIGTERM' | 'SIGKILL',
): boolean {
  if (!isRunning(ctx, identity)) return false;
  try {
    process.kill(identity.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
  return true;
}

/** SIGTERM, then SIGKILL once the grace period passed; resolves once the process is gone. */
export async function endProcess(ctx: ActionContext, identity: ProcessIdentity): Promise<AgentEnd> {
  if (!signalIfRunning(ctx, identity, 'SIGTERM')) return 'gone';
  if (await goneWithin(ctx, identity, ctx.graceMs)) return 'SIGTERM';
  ctx.log(
    'warn',
    `pid ${identity.pid} did not exit ${ctx.graceMs / 1000} s after SIGTERM; SIGKILL`,
  );
  if (!signalIfRunning(ctx, identity, 'SIGKILL')) return 'SIGTERM';
  if (await goneWithin(ctx, identity, ctx.graceMs)) return 'SIGKILL';
  throw new EngineError(`pid ${identity.pid} still runs ${ctx.graceMs / 1000} s after SIGKILL`);
}

/** The agent's recorded identity, with the wrapper's boot id and host; null before it is recorded. */
export function agentIdentity(state: SessionState): ProcessIdentity | null {
  if (state.agentPid === null || state.agentStartTicks === null || state.bootId === null)
    return null;
  return {
    pid: state.agentPid,
    startTicks: state.agentStartTicks,
    bootId: state.bootId,
    host: state.host,
  };
}

function wrapperIdentity(state: SessionState): ProcessIdentity | null {
  if (state.pid === null || state.startTicks === null || state.bootId === null) return null;
  return { pid: state.pid, startTicks: state.startTicks, bootId: state.bootId, host: state.host };
}

/**
 * Ends the agent of a session whose wrapper took its start token: waits (within the claim grace)
 * for the agent's identity, which its own process records right before it execs the agent, ends
 * it, then waits for the wrapper to record the exit and go. Resolves to the record as it is then,
 * and how the agent ended.
 */
export async function endSessionAgent(
  ctx: ActionContext,
  dir: string,
): Promise<{ state: SessionState; ended: AgentEnd }> {
  const deadline = ctx.now().getTime() + ctx.judge.claimGraceMs;
  for (;;) {
    const read = await readSessionState(dir);
    if (!('state' in read)) throw new EngineError(`${dir}: its session record cannot be read`);
    const agent = agentIdentity(read.state);
    const wrapper = wrapperIdentity(read.state);
    if (agent !== null) {
      const ended = await endProcess(ctx, agent);
      // The wrapper records the exit right after its agent ended, then exits itself.
      if (wrapper !== null) await goneWithin(ctx, wrapper, ctx.graceMs);
      const after = await readSessionState(dir);
      return { state: 'state' in after ? after.state : read.state, ended };
    }
    if (read.state.status === 'exited' || (wrapper !== null && !isRunning(ctx, wrapper)))
      return { state: read.state, ended: 'gone' };
    if (ctx.now().getTime() >= deadline)
      throw new EngineError(
        `${dir}: its agent was not recorded within ${ctx.judge.claimGraceMs / 1000} s of the cancel; its wrapper may still start it`,
      );
    await sleep(ctx.pollMs);
  }
}
