/**
 * An interactive agent that hit a usage limit. Interactive Claude Code does not exit on a limit:
 * it shows the message and waits, so its claim would hold its slot, and new claims would start
 * and hit the same limit, until a human acted. While the daemon follows a claim whose agent's
 * hooks report `limited` (agent-state.json, never the agent's own words), it pauses the queue at
 * once, through the governor's pause (`limit-paused`, until the agent's reset time, else
 * `--limit-backoff` after the limit was reported), and then ends that agent, politely then by
 * signal (close-finished.ts). Its claim is then requeued by the claim check as a usage limit: back
 * to `#delegated-X`, not an attempt. Other running agents are left alone.
 */
import { limitResumesAt } from '../dispatch/requeue-decision.js';
import { readAgentState } from '../agents/agent-state.js';
import type { SessionState } from '../sessions/session-state.js';
import { agentStateLimit } from '../agents/usage-limit.js';
import { closeFinished } from './close-finished.js';
import type { DaemonShared } from './daemon-shared.js';
import { pauseForLimit, retryPolicy } from './governor.js';

/**
 * Pauses the queue and ends the agent when the followed session's agent is limited; returns when
 * to look again (ms since the epoch; Infinity: only when its files change). Never throws: the
 * claim is followed on, and the next look tries again.
 */
export async function endLimitedAgent(
  shared: DaemonShared,
  dir: string,
  state: SessionState,
  item: { file: string; noun: string; session: string },
): Promise<number> {
  const { ctx } = shared;
  try {
    const limit = agentStateLimit(await readAgentState(dir));
    if (limit === null) return Number.POSITIVE_INFINITY;
    const until = limitResumesAt(limit, ctx.now(), retryPolicy(ctx.options));
    // The same time as the requeue's (both count from the report), so the pause is written once.
    await pauseForLimit(ctx, until, `usage limit, resets at ${until.toISOString()}`, item);
    return await closeFinished(shared, dir, state);
  } catch (error) {
    ctx.log('error', `${item.session}: handling its agent's usage limit: ${String(error)}`);
    return Number.POSITIVE_INFINITY;
  }
}
