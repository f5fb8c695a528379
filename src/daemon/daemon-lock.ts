/**
 * One daemon per root: an O_EXCL pidfile holding the daemon's process identity. A lock whose
 * holder is not alive (pid gone, reused, zombie, previous boot) is taken over.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
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
  const path = daemonLockPath(root);
  await mkdir(engineStateDir(root), { recursive: true });
  const me = selfIdentity();
  const content = `${JSON.stringify(me)}\n`;
  for (let attempt = 0; attempt < 5; attempt++) {
    // Created whole or not at all, so no reader ever sees an empty lock.
    if (await createWhole(path, content)) return { path, release: () => releaseIfOurs(path, me) };
    const raw = await readFile(path, 'utf8').catch(() => null);
    if (raw === null) continue;
    const holder = parseIdentity(raw);
    if (holder && holder.host !== hostname()) {
      throw new EngineError(
        `another daemon (pid ${holder.pid} on host ${holder.host}) is monitoring ${root}; remove ${path} if that host is gone`,
      );
    }
    if (holder && isAlive(checkLiveness(holder))) {
      throw new EngineError(`another daemon (pid ${holder.pid}) is monitoring ${root}`);
    }
    await takeOver(path, raw);
  }
  throw new EngineError(`Could not take the daemon lock ${path}: it keeps changing`);
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

function parseIdentity(raw: string): ProcessIdentity | null {
  try {
    const value = JSON.parse(raw) as ProcessIdentity;
    return typeof value.pid === 'number' && typeof value.startTicks === 'string' ? value : null;
  } catch {
    return null;
  }
}
