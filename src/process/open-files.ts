/**
 * The open descriptors of every process this user may inspect, read from Linux's /proc. Other
 * users' processes are skipped; where /proc is absent there are none, which `procReadable` tells
 * apart from a machine where nothing is open.
 */
import { existsSync, readdirSync } from 'node:fs';

export interface OpenDescriptor {
  pid: number;
  /** `/proc/<pid>/fd/<fd>`: stat and readlink follow it to what is open. */
  path: string;
  /** `/proc/<pid>/fdinfo/<fd>`: its flags and, for inotify, its watches. */
  info: string;
}

export function procReadable(): boolean {
  return existsSync('/proc/self/fd');
}

/**
 * Every descriptor of every process this user may inspect; `onHidden` is called for each process
 * whose descriptors may not be read (another user's, or under `hidepid`).
 */
export function openDescriptors(onHidden?: () => void): OpenDescriptor[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return [];
  }
  const descriptors: OpenDescriptor[] = [];
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch (error) {
      // Ended meanwhile, or not ours to read.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') onHidden?.();
      continue;
    }
    for (const fd of fds) {
      const at = `/proc/${pid}/`;
      descriptors.push({ pid: Number(pid), path: `${at}fd/${fd}`, info: `${at}fdinfo/${fd}` });
    }
  }
  return descriptors;
}
