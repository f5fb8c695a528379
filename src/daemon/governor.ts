/**
 * The usage-limit governor, the daemon's IO around the pure decisions of limit-pause.ts,
 * usage-limit.ts and requeue-decision.ts (a retry's Not Before is the item table's: a parked item):
 *
 * - a dead claim's failure is classified (a launch that never ran its wrapper, a usage limit the
 *   agent reported in structured fields, or the agent's own failure);
 * - a usage limit pauses the whole queue in `sessions/.engine/pause.json` (before its item is
 *   requeued, so no claim slips in between); running agents are left alone;
 * - no new claim starts while paused (admission asks gate(); the items wait in the item table);
 * - when the pause runs out, one item goes first as the probe; the pause is lifted once the probe
 *   got an answer from the API (or ended done), extended when it hit the limit again, and
 *   another item becomes the probe when it failed otherwise.
 *
 * Everything it decides on is on disk (the pause file, Recovery entries, session records), so a
 * daemon restarted even after kill -9 goes on where it was.
 */
import type { WorkItem } from '../dispatch/work-items.js';
import type { Failure, RetryPolicy } from '../dispatch/requeue-decision.js';
import { agentLogTail } from '../sessions/agent-log.js';
import { readAgentState } from '../agents/agent-state.js';
import {
  admission,
  extendedPause,
  readPause,
  updatePause,
  type LimitPause,
} from '../sessions/limit-pause.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { isSessionDone } from '../sessions/session-markers.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import {
  agentStateAnswered,
  agentStateLimit,
  printStreamAnswered,
  printStreamLimit,
} from '../agents/usage-limit.js';
import type { PauseGate } from './admission.js';
import type { DaemonContext, DaemonOptions } from './daemon-context.js';
import type { DaemonShared } from './daemon-shared.js';

export function retryPolicy(options: DaemonOptions): RetryPolicy {
  return {
    retries: options.retries,
    retryBackoffMs: options.retryBackoffMs,
    limitBackoffMs: options.limitBackoffMs,
  };
}

/**
 * What made a dead claim fail. A session abandoned before its wrapper recorded itself was
 * abandoned by a failed launch (nothing else abandons a record before the requeue), so its agent
 * never ran. A usage limit is read from structured fields only: a print run's stream-json, or the
 * hook state of the session (both belong to this attempt's own session directory).
 */
export async function failureOf(
  dir: string,
  state: SessionState | null,
  reason: string,
): Promise<Failure> {
  if (state?.status === 'abandoned' && state.pid === null) return { kind: 'launch', reason };
  if (state !== null) {
    const limit =
      (state.agent === 'claude-print' ? printStreamLimit((await agentLogTail(dir)) ?? '') : null) ??
      agentStateLimit(await readAgentState(dir));
    if (limit !== null)
      return {
        kind: 'usage-limit',
        ...(limit.resetsAt === undefined ? {} : { resetsAt: limit.resetsAt }),
        ...(limit.since === undefined ? {} : { since: limit.since }),
      };
  }
  return { kind: 'agent', reason };
}

/**
 * Pauses the queue until `until` (or keeps a later pause in force), before the limited item is
 * requeued; records `limit-paused` when the pause is new or later.
 */
export async function pauseForLimit(
  ctx: DaemonContext,
  until: Date,
  reason: string,
  about: { file: string; noun: string; session: string },
): Promise<void> {
  // extendedPause's null keeps the pause in force; to updatePause, null would remove it.
  const { after, before } = await updatePause(
    ctx.options.root,
    (current) => extendedPause(current, until, reason, ctx.now()) ?? undefined,
  );
  if (after === before || after === null) return;
  ctx.log('warn', `usage limit: no new claim starts until ${after.until} (${reason})`);
  await ctx.recordEvent({ event: 'limit-paused', ...about, until: after.until, reason });
}

function withoutProbe(pause: LimitPause): LimitPause {
  return { until: pause.until, reason: pause.reason, since: pause.since };
}

export class Governor {
  /** The pause as last seen, to notice one lifted by hand. */
  private seen: LimitPause | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly shared: DaemonShared,
    /** The pause changed (lifted, its probe dropped, run out): admission looks again. */
    private readonly onChange: () => void,
  ) {}

  /** What the usage-limit pause lets through now (read once per admission pass). */
  async gate(): Promise<PauseGate> {
    const pause = await readPause(this.shared.ctx.options.root);
    this.seen = pause;
    const verdict = admission(pause, this.shared.ctx.now());
    return verdict.kind;
  }

  /**
   * Makes `item` the probe of a pause that has run out, recorded before its claim (a restart
   * finds it, and sends no second one). False when another item is the probe already.
   */
  async takeProbe(item: WorkItem): Promise<boolean> {
    const { ctx } = this.shared;
    const now = ctx.now();
    const { after } = await updatePause(ctx.options.root, (current) =>
      current === null || current.probe !== undefined
        ? undefined
        : { ...current, probe: { file: item.file, noun: item.noun, since: now.toISOString() } },
    );
    this.seen = after;
    if (after === null) return true;
    if (after.probe?.file !== item.file || after.probe.noun !== item.noun) return false;
    ctx.log('info', `usage limit: ${item.file} goes first, as the probe`);
    return true;
  }

  /** After an admitted item's launch: the probe's session is recorded (or the probe dropped). */
  async launched(item: WorkItem, session: string | null): Promise<void> {
    const { after } = await updatePause(this.shared.ctx.options.root, (current) => {
      const probe = current?.probe;
      if (!current || !probe || probe.file !== item.file || probe.noun !== item.noun)
        return undefined;
      if (session === null) return withoutProbe(current);
      return { ...current, probe: { ...probe, session } };
    });
    this.seen = after;
    if (session === null && after?.probe === undefined) this.onChange();
  }

  start(): void {
    this.schedule();
  }

  stop(): void {
    if (this.timer) this.shared.ctx.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.shared.stopping) return;
    this.timer = this.shared.ctx.timers.setTimeout(() => {
      void this.shared
        .track(this.tick())
        .catch((error: unknown) => this.shared.ctx.log('error', `governor: ${String(error)}`))
        .finally(() => this.schedule());
    }, this.shared.ctx.options.pollMs);
  }

  /** Looks at the pause and its probe; admission looks again when the pause has run out. */
  async tick(): Promise<void> {
    const { ctx } = this.shared;
    const root = ctx.options.root;
    const pause = await readPause(root);
    if (this.seen !== null && pause === null) {
      // Removed by `engine resume` (the probe's pass removes it through lift()).
      await this.lifted('lifted by hand (engine resume)');
    } else if (pause !== null) {
      this.seen = pause;
      await this.judgeProbe(pause);
    }
    const current = this.seen;
    const now = ctx.now().getTime();
    if (current !== null && current.probe === undefined && now >= Date.parse(current.until)) {
      this.onChange();
    }
  }

  private async judgeProbe(pause: LimitPause): Promise<void> {
    const { ctx } = this.shared;
    const { probe } = pause;
    if (!probe) return;
    const dir = probe.session ? resolveSessionRef(ctx.options.root, probe.session) : null;
    if (dir === null) {
      // Chosen, and never claimed (the daemon died in between, or the claim was lost).
      if (ctx.now().getTime() - Date.parse(probe.since) > ctx.options.claimGraceMs)
        await this.dropProbe(probe.file, 'it was never claimed');
      return;
    }
    if (await isSessionDone(dir)) return this.lift(`probe ${probe.session} ended done`);
    const read = await readSessionState(dir);
    const state = 'state' in read ? read.state : null;
    const answered =
      (state?.agent === 'claude-print' && printStreamAnswered((await agentLogTail(dir)) ?? '')) ||
      agentStateAnswered(await readAgentState(dir));
    if (answered) return this.lift(`probe ${probe.session} got an answer from the API`);
    // A probe that hit the limit again extended the pause (and dropped the probe) before its
    // requeue; one ended otherwise says nothing about the limit: another item probes.
    if (state?.status === 'abandoned')
      await this.dropProbe(probe.file, `it ended: ${state.reason}`);
  }

  private async dropProbe(file: string, why: string): Promise<void> {
    const { after } = await updatePause(this.shared.ctx.options.root, (current) => {
      if (current?.probe?.file !== file) return undefined;
      return withoutProbe(current);
    });
    this.seen = after;
    this.shared.ctx.log(
      'info',
      `usage limit: the probe ${file} says nothing (${why}); another goes`,
    );
    this.onChange();
  }

  private async lift(reason: string): Promise<void> {
    const { after } = await updatePause(this.shared.ctx.options.root, (current) =>
      current === null ? undefined : null,
    );
    if (after !== null) return;
    await this.lifted(reason);
  }

  private async lifted(reason: string): Promise<void> {
    this.seen = null;
    this.shared.ctx.log('info', `usage limit lifted: ${reason}`);
    await this.shared.ctx.recordEvent({ event: 'limit-lifted', reason });
    this.onChange();
  }
}
