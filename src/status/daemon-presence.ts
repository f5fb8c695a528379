/**
 * Whether a daemon runs on the root, judged as its lock does (daemon/daemon-lock.ts): the lock
 * holds the daemon's process identity; on this host it runs while that process is alive, and on
 * another host it cannot be told from here (the lock stays held). Since when: the event log's last
 * `daemon-started` of that process.
 */
import { checkLiveness, isAlive, type ProcProbe } from '../process/process-identity.js';
import type { ProcessIdentity } from '../process/identity.js';
import type { EngineEvent } from '../sessions/event-log.js';

export interface DaemonPresence {
  /**
   * `running`: its process is alive; `other-host`: the lock is held from another host (taken as
   * running, as the lock does); `none`: no lock, or its holder is gone.
   */
  state: 'running' | 'other-host' | 'none';
  pid: number | null;
  host: string | null;
  /** When it started (ISO), from the event log; null when the log does not say. */
  since: string | null;
  /** A lock left by a daemon that is gone: its pid. */
  stalePid: number | null;
}

export function daemonPresence(
  holder: ProcessIdentity | null,
  events: readonly EngineEvent[],
  probe: ProcProbe,
): DaemonPresence {
  const none = { state: 'none', pid: null, host: null, since: null, stalePid: null } as const;
  if (holder === null) return none;
  const liveness = checkLiveness(holder, probe);
  if (liveness !== 'other-host' && !isAlive(liveness)) return { ...none, stalePid: holder.pid };
  const started = events.findLast(
    (e) => e.event === 'daemon-started' && e.pid === holder.pid && e.host === holder.host,
  );
  return {
    state: liveness === 'other-host' ? 'other-host' : 'running',
    pid: holder.pid,
    host: holder.host,
    since: started?.time ?? null,
    stalePid: null,
  };
}
