/**
 * Reads the identity of a process (identity.ts) from /proc. This file is the entry point of
 * src/process: it also re-exports the identity type and the probe and liveness API.
 */
import { EngineError } from '../errors.js';
import { isValidPid, systemProbe, type ProcProbe } from './proc-probe.js';
import { parseProcStat } from './proc-stat.js';
import type { ProcessIdentity } from './identity.js';

/**
 * The identity of the process that has `pid` now; `null` when there is no such process (or the
 * probe's stat text is not a well-formed stat line for that pid, which the kernel never writes).
 * A zombie still has an identity: use `checkLiveness` to ask whether it runs.
 */
export function readProcessIdentity(
  pid: number,
  probe: ProcProbe = systemProbe,
): ProcessIdentity | null {
  if (!isValidPid(pid)) return null;
  const text = probe.readStat(pid);
  if (text === null) return null;
  const stat = parseProcStat(text);
  if (stat === null || stat.pid !== pid) return null;
  return { pid, startTicks: stat.startTicks, bootId: probe.bootId(), host: probe.hostname() };
}

/** The identity of this process, e.g. for a pidfile or a session record. */
export function selfIdentity(probe: ProcProbe = systemProbe): ProcessIdentity {
  const identity = readProcessIdentity(process.pid, probe);
  if (identity === null) {
    throw new EngineError(`cannot read this process's own identity from /proc/${process.pid}/stat`);
  }
  return identity;
}

export type { ProcessIdentity } from './identity.js';
export { systemProbe, isValidPid, type ProcProbe } from './proc-probe.js';
export { parseProcStat, type ProcStat } from './proc-stat.js';
export { checkLiveness, describeLiveness, isAlive, type Liveness } from './liveness.js';
