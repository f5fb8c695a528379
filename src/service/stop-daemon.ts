/**
 * `engine stop`: ends the daemon of a root, found by its lock (daemon/daemon-lock) and proved to
 * be the process that wrote it (pid, start time, boot, host), so a reused pid is never signalled.
 * SIGTERM is the daemon's Ctrl-C: it exits and its agents keep running.
 */
import { readDaemonLock } from '../daemon/daemon-lock.js';
import { isErrnoException } from '../errors.js';
import {
  checkLiveness,
  describeLiveness,
  isAlive,
  systemProbe,
  type ProcProbe,
  type ProcessIdentity,
} from '../process/process-identity.js';

export type StopOutcome =
  /** No lock, or its holder is gone: `why` says which. */
  | { kind: 'none'; why: string }
  /** The lock names a process on another host: it cannot be signalled from here. */
  | { kind: 'other-host'; holder: ProcessIdentity }
  | { kind: 'stopped'; pid: number }
  /** kill said EPERM: the daemon runs as another user. */
  | { kind: 'not-permitted'; pid: number }
  /** Signalled, but still alive at the deadline. */
  | { kind: 'still-running'; pid: number };

export interface StopOptions {
  timeoutMs: number;
  pollMs?: number;
  probe?: ProcProbe;
  /** process.kill unless a test injects one. */
  kill?: (pid: number, signal: NodeJS.Signals) => void;
}

/** Signals the daemon of `root` and waits until it has exited or `timeoutMs` has passed. */
export async function stopDaemon(root: string, options: StopOptions): Promise<StopOutcome> {
  const probe = options.probe ?? systemProbe;
  const holder = await readDaemonLock(root);
  if (holder === null) return { kind: 'none', why: 'no daemon lock' };
  const liveness = checkLiveness(holder, probe);
  if (liveness === 'other-host') return { kind: 'other-host', holder };
  if (!isAlive(liveness))
    return { kind: 'none', why: `its lock names ${describeLiveness(holder, liveness, probe)}` };
  try {
    (options.kill ?? process.kill)(holder.pid, 'SIGTERM');
  } catch (error) {
    // ESRCH: exited between the check and the signal, so what was asked is done. Anything else
    // (EPERM) leaves it running.
    if (isErrnoException(error) && error.code === 'ESRCH')
      return { kind: 'stopped', pid: holder.pid };
    if (isErrnoException(error) && error.code === 'EPERM')
      return { kind: 'not-permitted', pid: holder.pid };
    throw error;
  }
  return (await exitedBy(holder, options, probe))
    ? { kind: 'stopped', pid: holder.pid }
    : { kind: 'still-running', pid: holder.pid };
}

async function exitedBy(
  holder: ProcessIdentity,
  options: StopOptions,
  probe: ProcProbe,
): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (!isAlive(checkLiveness(holder, probe))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 50));
  }
}
