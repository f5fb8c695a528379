/**
 * What the item commands (`engine cancel`, `engine retry`, `engine close`) act with: the project
 * root, the clock, the process probe, how claims are judged and finished agents closed (the
 * project's settings, as the daemon has them), the event log, and how long an agent gets between SIGTERM and SIGKILL.
 */
import type { LogFn } from '../daemon/daemon-context.js';
import { judgeOptionsOf, loadSettings } from '../settings/load-settings.js';
import { messageOf } from '../errors.js';
import { systemProbe, type ProcProbe } from '../process/process-identity.js';
import { appendEvent, type EventInput } from '../sessions/event-log.js';
import type { JudgeOptions } from '../sessions/judge-session.js';

export interface ActionContext {
  root: string;
  now(): Date;
  probe: ProcProbe;
  judge: JudgeOptions;
  /** The project's `--close-after-done`, in ms: a daemon's close, due before a human's, counts. */
  closeAfterDoneMs: number;
  /** Progress for the human who runs the command (an agent asked to exit, signalled). */
  log: LogFn;
  recordEvent(event: EventInput): Promise<void>;
  /** From SIGTERM to SIGKILL. */
  graceMs: number;
  /** How often a wait for a process looks again. */
  pollMs: number;
}

/** The context of a command run on `root`, with the project's settings (engine.json, env). */
export async function projectActionContext(
  root: string,
  env: NodeJS.ProcessEnv,
  options: { log: LogFn; graceMs: number },
): Promise<ActionContext> {
  const { settings } = await loadSettings(root, {}, env);
  return {
    root,
    now: () => new Date(),
    probe: systemProbe,
    judge: judgeOptionsOf(settings),
    closeAfterDoneMs: settings.closeAfterDoneMs,
    log: options.log,
    // Best effort, as the daemon's: the act is done, and a full disk must not make it read as failed.
    recordEvent: (event) =>
      appendEvent(root, { ...event, time: new Date().toISOString() }).catch((error: unknown) =>
        options.log('warn', `event log: ${messageOf(error)}`),
      ),
    graceMs: options.graceMs,
    pollMs: 50,
  };
}
