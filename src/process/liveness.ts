/**
 * Is the process named by a recorded identity still running? Answers from /proc, not from
 * `kill(pid, 0)`: that call says "exists" for a zombie and for whatever process reuses the pid, and
 * "EPERM" for a live process of another user (TECH-NOTES §6).
 */
import { EngineError } from '../errors.js';
import { isValidPid, systemProbe, type ProcProbe } from './proc-probe.js';
import { isExitedState, parseProcStat } from './proc-stat.js';
import type { ProcessIdentity } from './identity.js';

/**
 * - `alive`: the recorded process runs (same pid, same start time, this boot, this host).
 * - `dead`: no process has the pid any more.
 * - `zombie`: it exited and its parent has not reaped it yet (tmux panes stay so for >10 s).
 * - `reused`: the pid now belongs to a process started at another time.
 * - `previous-boot`: recorded before the last reboot, so that process is gone.
 * - `other-host`: recorded on another machine; this one cannot tell (the caller uses the heartbeat).
 */
export type Liveness = 'alive' | 'dead' | 'zombie' | 'reused' | 'previous-boot' | 'other-host';

/** Rounds of stat/kill(0) to settle a pid that is being reaped and reused while we look. */
const RACE_ROUNDS = 3;

/**
 * Classifies a recorded identity. Checks, in order: host, boot id, the /proc entry, start time,
 * state. Throws `EngineError` only when the OS cannot answer: /proc or the boot id unreadable, or
 * a pid that exists for kill(2) but has no /proc entry (procfs mounted with hidepid=2).
 */
export function checkLiveness(recorded: ProcessIdentity, probe: ProcProbe = systemProbe): Liveness {
  if (recorded.host !== probe.hostname()) return 'other-host';
  if (recorded.bootId !== probe.bootId()) return 'previous-boot';
  // 0 and negative pids never name one process; a record holding one names nothing that runs.
  if (!isValidPid(recorded.pid)) return 'dead';

  for (let round = 0; round < RACE_ROUNDS; round++) {
    const text = probe.readStat(recorded.pid);
    if (text !== null) return classifyStat(recorded, text);
    // No /proc entry. kill(2) decides between "gone" and "hidden from /proc"; if the pid exists,
    // it may also have been reused right after our read, so look at /proc again.
    if (probe.kill0(recorded.pid) === 'missing') return 'dead';
  }
  throw new EngineError(
    `pid ${recorded.pid} exists but /proc/${recorded.pid}/stat is not visible ` +
      '(is /proc mounted with hidepid?); cannot tell whether it is the recorded process',
  );
}

function classifyStat(recorded: ProcessIdentity, text: string): Liveness {
  const stat = parseProcStat(text);
  // The kernel always writes a well-formed line for the pid asked for, so an unparsable one can
  // only come from a broken or injected probe. It proves nothing about the recorded process, and
  // 'dead' is the answer that never keeps a claim alive on unproven evidence.
  if (stat === null || stat.pid !== recorded.pid) return 'dead';
  if (stat.startTicks !== String(recorded.startTicks).trim()) return 'reused';
  if (isExitedState(stat.state)) return 'zombie';
  return 'alive';
}

/** Only `alive` is alive: a zombie has exited, a reused pid runs someone else. */
export function isAlive(liveness: Liveness): boolean {
  return liveness === 'alive';
}

/**
 * One line for logs and requeue reasons. `probe` only supplies this machine's boot id and host
 * name for the `previous-boot` and `other-host` messages.
 */
export function describeLiveness(
  recorded: ProcessIdentity,
  liveness: Liveness,
  probe: ProcProbe = systemProbe,
): string {
  const pid = `pid ${recorded.pid}`;
  switch (liveness) {
    case 'alive':
      return `${pid} is alive`;
    case 'dead':
      return `${pid} is gone`;
    case 'zombie':
      return `${pid} is a zombie (it exited and was not reaped yet)`;
    case 'reused':
      return `${pid} now belongs to another process (start time differs)`;
    case 'previous-boot':
      return `${pid} was recorded on boot ${recorded.bootId}, this is boot ${current(() => probe.bootId())}`;
    case 'other-host':
      return `${pid} was recorded on host ${recorded.host}, this is host ${current(() => probe.hostname())}`;
  }
}

function current(read: () => string): string {
  try {
    return read();
  } catch {
    return '(unknown)';
  }
}
