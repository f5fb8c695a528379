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

export function* openDescriptors(): Generator<OpenDescriptor> {
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return;
  }
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // Another user's, or ended.
    }
    for (const fd of fds) {
      yield { pid: Number(pid), path: `/proc/${pid}/fd/${fd}`, info: `/proc/${pid}/fdinfo/${fd}` };
    }
  }
}
