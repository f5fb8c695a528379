/**
 * The `waiting-for-input` event: recorded once each time a followed session's agent starts to
 * wait for a human (its agent-state.json says `waiting`). One wait is one `at` (agent-state.ts),
 * carried by the event as `since`: a daemon that restarted during a wait finds it in the event log
 * and does not announce it again.
 */
import { readEvents } from '../sessions/event-log.js';
import { readAgentState, type AgentState } from '../agents/agent-state.js';
import type { DaemonContext } from './daemon-context.js';

/**
 * Whether `current` is a wait not yet announced, given the `since` of the last wait announced
 * (null: none, or the agent has done something else since).
 */
export function newWait(announced: string | null, current: AgentState | null): boolean {
  return current?.state === 'waiting' && current.at !== announced;
}

export class WaitingWatch {
  /** The `since` of the wait last announced for this session; undefined before the first look. */
  private announced: string | null | undefined = undefined;

  constructor(
    private readonly ctx: Pick<DaemonContext, 'recordEvent' | 'options' | 'log'>,
    private readonly dir: string,
    private readonly item: { file: string; noun: string; session: string },
  ) {}

  /**
   * Looks at the agent's state; records the event when it has just begun to wait. Never throws:
   * the event is for humans, and following the claim goes on without it.
   */
  async check(): Promise<void> {
    try {
      await this.announce();
    } catch (error) {
      this.ctx.log(
        'warn',
        `${this.item.session}: cannot tell whether its agent waits: ${String(error)}`,
      );
    }
  }

  private async announce(): Promise<void> {
    const current = await readAgentState(this.dir);
    if (current?.state !== 'waiting') {
      this.announced = null;
      return;
    }
    if (this.announced === undefined) this.announced = await this.lastAnnounced();
    if (!newWait(this.announced, current)) return;
    this.announced = current.at;
    const reason = current.detail ?? current.event;
    const { file, noun, session } = this.item;
    this.ctx.log('info', `${file} (#claimed-${noun}, ${session}) waits for input: ${reason}`, {
      file,
      noun,
      session,
    });
    await this.ctx.recordEvent({
      event: 'waiting-for-input',
      ...this.item,
      reason,
      since: current.at,
    });
  }

  private async lastAnnounced(): Promise<string | null> {
    const events = await readEvents(this.ctx.options.root);
    const last = events.findLast(
      (e) => e.event === 'waiting-for-input' && e.session === this.item.session,
    );
    return typeof last?.since === 'string' ? last.since : null;
  }
}
