/**
 * One daemon per root, and one per checkout of a shared branch: an O_EXCL pidfile holding the
 * daemon's process identity. A lock whose holder is not alive (pid gone, reused, zombie, previous
 * boot) is taken over.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { EngineError } from '../errors.js';
import { createWhole } from '../files/create-whole.js';
import {
  checkLiveness,
  isAlive,
  selfIdentity,
  type ProcessIdentity,
} from '../process/process-identity.js';
import { engineStateDir } from '../sessions/event-log.js';

export interface DaemonLock {
  path: string;
  release(): Promise<void>;
}

export function daemonLockPath(root: string): string {
  return join(engineStateDir(root), 'daemon.lock');
}

export async function acquireDaemonLock(root: string): Promise<DaemonLock> {
  await mkdir(engineStateDir(root), { recursive: true });
  return acquireLock(daemonLockPath(root), {}, () => `is monitoring ${root}`);
}

/**
 * One daemon per checkout of a shared branch (`--claims git`): two daemons on different roots
 * of one repository would share its checkout and its instance id. The lock, `<checkout>.lock`,
 * names the root of the daemon holding it.
 */
export async function acquireCheckoutLock(checkout: string, root: string): Promise<DaemonLock> {
  await mkdir(dirname(checkout), { recursive: true });
  return acquireLock(
    `${checkout}.lock`,
    { root },
    (holder) =>
      `holds the checkout ${checkout} of this repository's shared branch, for the root ${String(holder.root)}: one daemon per repository and host (stop it, or run this one there)`,
  );
}

/** An O_EXCL lock holding this process's identity and `extra`; `refusal`: what a live holder does. */
async function acquireLock(
  path: string,
  extra: Record<string, string>,
  refusal: (holder: ProcessIdentity & Record<string, unknown>) => string,
): Promise<DaemonLock> {
  const me = selfIdentity();
  const content = `${JSON.stringify({ ...me, ...extra })}\n`;
  for (let attempt = 0; attempt < 5; attempt++) {
    // Created whole or not at all, so no reader ever sees an empty lock.
    if (await createWhole(path, content)) return { path, release: () => releaseIfOurs(path, me) };
    const raw = await readFile(path, 'utf8').catch(() => null);
    if (raw === null) continue;
    const holder = parseIdentity(raw);
    if (holder && holder.host !== hostname()) {
      throw new EngineError(
        `another daemon (pid ${holder.pid} on host ${holder.host}) ${refusal(holder)}; remove ${path} if that host is gone`,
      );
    }
    if (holder && isAlive(checkLiveness(holder))) {
      throw new EngineError(`another daemon (pid ${holder.pid}) ${refusal(holder)}`);
    }
    await takeOver(path, raw);
  }
  throw new EngineError(`Could not take the lock ${path}: it keeps changing`);
}

/** Moves a dead holder's lock aside; puts it back (never over another lock) if it was not that. */
async function takeOver(path: string, staleContent: string): Promise<void> {
  const aside = `${path}.${randomBytes(4).toString('hex')}.stale`;
  try {
    await rename(path, aside);
  } catch {
    return;
  }
  const moved = await readFile(aside, 'utf8').catch(() => null);
  if (moved !== null && moved !== staleContent) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

async function releaseIfOurs(path: string, me: ProcessIdentity): Promise<void> {
  const raw = await readFile(path, 'utf8').catch(() => null);
  const holder = raw ? parseIdentity(raw) : null;
  if (holder && holder.pid === me.pid && holder.startTicks === me.startTicks)
    await unlink(path).catch(() => undefined);
}

/**
 * The identity the daemon lock of `root` holds, or null when there is none (or it holds no
 * identity). Whether that daemon runs is judged as acquireDaemonLock does: on this host, by
 * checkLiveness; on another, it cannot be told from here.
 */
export async function readDaemonLock(root: string): Promise<ProcessIdentity | null> {
  const raw = await readFile(daemonLockPath(root), 'utf8').catch(() => null);
  return raw === null ? null : parseIdentity(raw);
}

function parseIdentity(raw: string): (ProcessIdentity & Record<string, unknown>) | null {
  try {
    const value = JSON.parse(raw) as ProcessIdentity & Record<string, unknown>;
    return typeof value.pid === 'number' && typeof value.startTicks === 'string' ? value : null;
  } catch {
    return null;
  }
}
