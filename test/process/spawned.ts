/**
 * Test helpers: real processes that every test kills by pid afterwards, and polling helpers.
 * Not a test file itself.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseProcStat } from '../../src/process/proc-stat.js';
import { waitFor } from '../helpers/wait-for.js';

export { waitFor };

/** Processes started by a test file; `killAll` in afterEach kills each by its pid and reaps it. */
export class Children {
  private readonly children: ChildProcess[] = [];
  private readonly cleanups: (() => void)[] = [];

  spawn(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
    const child = spawn(command, args, { stdio: 'ignore', ...options });
    if (child.pid === undefined) throw new Error(`could not spawn ${command}`);
    // Swallow spawn errors here; tests look at pids and exit codes.
    child.on('error', () => {});
    return this.track(child);
  }

  /** A child started elsewhere (with its own stdio), to kill with the others. */
  track(child: ChildProcess): ChildProcess {
    this.children.push(child);
    return child;
  }

  /** Something else to undo first (e.g. let a zombie's parent reap it). */
  onCleanup(cleanup: () => void): void {
    this.cleanups.push(cleanup);
  }

  async killAll(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    const children = this.children.splice(0);
    for (const child of children) {
      if (child.pid !== undefined && !hasExited(child)) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    await Promise.all(children.map((child) => exited(child)));
  }
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once node has reaped the child (the 'exit' event comes after waitpid). */
export function exited(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** The kernel's state letter for a pid, or null when it has no /proc entry. */
export function procState(pid: number): string | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.state ?? null;
  } catch {
    return null;
  }
}

/** Real uid of a pid, from /proc/<pid>/status. */
export function procUid(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Uid:'));
    const uid = line?.split(/\s+/)[1];
    return uid === undefined ? null : Number(uid);
  } catch {
    return null;
  }
}

/** Clock ticks since boot (USER_HZ is 100 on Linux), as used by /proc/<pid>/stat field 22. */
export function uptimeTicks(): number {
  const seconds = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return Math.floor(seconds * 100);
}

/**
 * A zombie: `sh` starts `sleep` in the background and then becomes `cat` (exec), which never
 * reaps a child, so the killed `sleep` stays a zombie until `release()` closes cat's stdin and
 * cat exits (the zombie is then reparented and reaped). The kill waits for the exec: before it,
 * the shell itself may reap a finished background job.
 */
export async function startZombie(children: Children): Promise<{
  parent: ChildProcess;
  pid: number;
  release: () => void;
}> {
  const parent = children.spawn('sh', ['-c', 'sleep 30 & exec cat'], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const release = () => parent.stdin?.end();
  children.onCleanup(release);
  const ppid = parent.pid as number;
  await waitFor(() => procComm(ppid) === 'cat', { message: `sh ${ppid} to become cat` });
  const pid = await waitFor(() => childrenOf(ppid)[0] ?? null, {
    message: `the sleep started by ${ppid}`,
  });
  process.kill(pid, 'SIGKILL');
  await waitFor(() => procState(pid) === 'Z', { message: `pid ${pid} to become a zombie` });
  return { parent, pid, release };
}

function procComm(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The pids whose parent is `ppid`, from the PPid line of /proc/<pid>/status. */
function childrenOf(ppid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return (
          /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] === `${ppid}`
        );
      } catch {
        return false;
      }
    });
}

export const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';

/** Whether this process may steer pid allocation (root with CAP_SYS_ADMIN in its pid namespace). */
export function nsLastPidWritable(): boolean {
  try {
    accessSync(NS_LAST_PID, constants.W_OK);
    // Writing the current value back changes nothing but proves the capability.
    writeFileSync(NS_LAST_PID, readFileSync(NS_LAST_PID, 'utf8').trim());
    return true;
  } catch {
    return false;
  }
}

/** Whether a process can be started as `nobody` (uid 65534) through setpriv. */
export function canRunAsNobody(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    accessSync('/usr/bin/setpriv', constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export const NOBODY = 65534;
export const AS_NOBODY = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
