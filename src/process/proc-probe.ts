/**
 * What the liveness check reads from the operating system, behind an interface so unit tests can
 * inject any answer. `systemProbe` is the Linux implementation (procfs).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { EngineError, isErrnoException } from '../errors.js';

export interface ProcProbe {
  /** The text of /proc/<pid>/stat; `null` when there is no such process. */
  readStat(pid: number): string | null;
  /** /proc/sys/kernel/random/boot_id, trimmed: changes on every boot. */
  bootId(): string;
  hostname(): string;
  /**
   * `kill(pid, 0)`. `eperm` means the process exists but belongs to another user. It is only a
   * fallback: a zombie also answers `exists`, and a reused pid answers for the new process.
   */
  kill0(pid: number): 'exists' | 'missing' | 'eperm';
}

/** A pid the kernel could have handed out. 0 and negative numbers address process groups in kill(2). */
export function isValidPid(pid: number): boolean {
  return Number.isSafeInteger(pid) && pid > 0;
}

export const systemProbe: ProcProbe = {
  readStat(pid) {
    if (!isValidPid(pid)) return null;
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch (error) {
      // ESRCH: the process was reaped between open and read.
      if (isErrnoException(error) && (error.code === 'ENOENT' || error.code === 'ESRCH')) {
        return null;
      }
      throw new EngineError(
        `cannot read /proc/${pid}/stat (is /proc mounted with hidepid?): ${String(error)}`,
        { cause: error },
      );
    }
  },

  bootId() {
    try {
      return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch (error) {
      throw new EngineError(
        `cannot read /proc/sys/kernel/random/boot_id (engine needs Linux procfs): ${String(error)}`,
        { cause: error },
      );
    }
  },

  hostname() {
    return hostname();
  },

  kill0(pid) {
    // Never signal 0 or a negative pid: those mean "my process group" and "every process".
    if (!isValidPid(pid)) return 'missing';
    try {
      process.kill(pid, 0);
      return 'exists';
    } catch (error) {
      if (isErrnoException(error) && error.code === 'ESRCH') return 'missing';
      if (isErrnoException(error) && error.code === 'EPERM') return 'eperm';
      throw error;
    }
  },
};
