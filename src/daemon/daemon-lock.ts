/**
 * One daemon per root: an O_EXCL pidfile holding the daemon's process identity. A lock whose
 * holder is not alive (pid gone, reused, zombie, previous boot) is taken over.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../errors.js';
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
    if (await publish(path, content)) return { path, release: () => releaseIfOurs(path, me) };
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

/**
 * Creates the lock whole or not at all: the identity is written to a temporary file first and
 * linked into place (link fails if the lock exists), so no reader ever sees an empty lock.
 */
async function publish(path: string, content: string): Promise<boolean> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o644);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
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

function parseIdentity(raw: string): ProcessIdentity | null {
  try {
    const value = JSON.parse(raw) as ProcessIdentity;
    return typeof value.pid === 'number' && typeof value.startTicks === 'string' ? value : null;
  } catch {
    return null;
  }
}
