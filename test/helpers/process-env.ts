/**
 * Finds processes by an entry of the environment they were started with (/proc/<pid>/environ)
 * and ends them by pid: how tests clean up what they started without knowing every pid, and
 * never by name. Linux only, like the rest of the suite.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface FoundProcess {
  pid: number;
  /** The command line, each argument cut at its first newline (the wrapper's script is long). */
  command: string;
}

/** Processes other than this one whose environment holds one of `entries` (`NAME=value`). */
export function processesWithEnv(...entries: string[]): FoundProcess[] {
  const found: FoundProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      // A zombie's environ is empty: it runs nothing and is left to its parent to reap.
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (!entries.some((entry) => env.includes(entry))) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const command = argv
        .map((arg) => (arg.includes('\n') ? `${arg.slice(0, arg.indexOf('\n'))}…` : arg))
        .join(' ');
      found.push({ pid: Number(name), command });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/**
 * SIGKILL to each process whose environment holds one of `entries`; returns those it found. Each
 * is killed right after a fresh scan, so a pid reused since an earlier look is not hit.
 */
export function killProcessesWithEnv(...entries: string[]): FoundProcess[] {
  const found = processesWithEnv(...entries);
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
