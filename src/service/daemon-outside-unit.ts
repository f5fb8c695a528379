/**
 * Whether a root's daemon already runs outside its service: started from a terminal, it holds the
 * daemon lock, so the service's daemon would fail on the lock and be restarted every 10 s while
 * install said it runs. A process of the unit has the unit in its cgroup path (systemd).
 */
import { readFile } from 'node:fs/promises';
import { readDaemonLock } from '../daemon/daemon-lock.js';
import {
  checkLiveness,
  isAlive,
  systemProbe,
  type ProcessIdentity,
} from '../process/process-identity.js';

/** The live daemon of `root` that `unit` did not start, or null. */
export async function daemonOutsideUnit(
  root: string,
  unit: string,
): Promise<ProcessIdentity | null> {
  const holder = await readDaemonLock(root);
  if (holder === null || !isAlive(checkLiveness(holder, systemProbe))) return null;
  const cgroup = await readFile(`/proc/${holder.pid}/cgroup`, 'utf8').catch(() => '');
  const inUnit = cgroup.split('\n').some((line) => line.split('/').includes(unit));
  return inUnit ? null : holder;
}
