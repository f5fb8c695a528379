/**
 * The identity of a process: pid + start time (clock ticks after boot) + boot id + host. Together
 * they name one process unambiguously, although the kernel reuses pids (pid_max may be 32,768).
 * Its own module so liveness can use it while process-identity, the entry point, re-exports
 * liveness.
 */
export interface ProcessIdentity {
  pid: number;
  startTicks: string;
  bootId: string;
  host: string;
}
