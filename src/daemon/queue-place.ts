/**
 * Where a daemon of git claims reads its queue (docs/MULTI-HOST.md, "What status and the board
 * read"): its checkout of the shared branch, recorded beside the root's daemon lock so that
 * `engine status`, the board and the daemon's status warm-up read the same files, the
 * dependencies and directives/TAGS.md there too. The record counts only while the daemon that
 * wrote it holds the root's lock: a record left by a daemon that is gone names nothing.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { EngineError } from '../errors.js';
import { pathExists } from '../files/path-exists.js';
import { checkLiveness, isAlive, selfIdentity } from '../process/process-identity.js';
import { engineStateDir } from '../sessions/event-log.js';
import { readDaemonLock } from './daemon-lock.js';

/** A git-claims daemon's queue: the root's counterpart in its checkout of the shared branch. */
export interface QueuePlace {
  /** The checkout (`$XDG_STATE_HOME/engine/checkouts/...`). */
  checkout: string;
  /** The root's counterpart in the checkout: the queue's paths are the root's, below it. */
  root: string;
  remote: string;
  branch: string;
  /** No daemon runs on the root now: the checkout as the last one left it (queuePlaceOf). */
  stopped?: true;
}

interface PlaceRecord extends QueuePlace {
  pid: number;
  startTicks: string;
}

function recordPath(root: string): string {
  return join(engineStateDir(root), 'queue-place.json');
}

/** Written by the daemon once it holds the root's lock and its checkout is made. */
export async function recordQueuePlace(root: string, place: QueuePlace): Promise<void> {
  const { pid, startTicks } = selfIdentity();
  const record: PlaceRecord = { ...place, pid, startTicks };
  await mkdir(engineStateDir(root), { recursive: true });
  await writeFile(recordPath(root), `${JSON.stringify(record)}\n`);
}

/** The checkout the root's running daemon reads its queue from; null: none runs with git claims. */
export async function liveQueuePlace(root: string): Promise<QueuePlace | null> {
  const holder = await readDaemonLock(root);
  if (holder === null || !isAlive(checkLiveness(holder))) return null;
  const record = await readRecord(root);
  if (record === null || record.pid !== holder.pid || record.startTicks !== holder.startTicks)
    return null;
  const { checkout, root: at, remote, branch } = record;
  return { checkout, root: at, remote, branch };
}

/**
 * Where a status reads the queue: the running daemon's checkout; with `gitClaims` (the settings
 * say so) and none running, the checkout the last one read, while it is there, as it left it
 * (its agents may still run from it, and the human's tree shows none of their claims).
 */
export async function queuePlaceOf(root: string, gitClaims: boolean): Promise<QueuePlace | null> {
  const live = await liveQueuePlace(root);
  if (live !== null || !gitClaims) return live;
  const record = await readRecord(root);
  if (record === null) return null;
  const { checkout, root: at, remote, branch } = record;
  if (!(await pathExists(at))) return null;
  return { checkout, root: at, remote, branch, stopped: true };
}

/** The record as written; null when there is none, or it does not parse as one. */
async function readRecord(root: string): Promise<PlaceRecord | null> {
  const raw = await readFile(recordPath(root), 'utf8').catch(() => null);
  if (raw === null) return null;
  try {
    const record = JSON.parse(raw) as PlaceRecord;
    const { checkout, root: at, remote, branch } = record;
    if ([checkout, at, remote, branch].some((field) => typeof field !== 'string')) return null;
    return record;
  } catch {
    return null;
  }
}

/**
 * `paths` (below `root`) as the same places below the queue's root; one already there (the
 * daemon's own) as it is; null place: all unchanged.
 */
export function queuePaths(root: string, place: QueuePlace | null, paths: string[]): string[] {
  if (place === null) return paths;
  return paths.map((path) => {
    if (isBelow(place.root, path)) return path;
    const inRoot = relative(root, path);
    if (inRoot.startsWith('..') || isAbsolute(inRoot))
      throw new EngineError(
        `${path} is outside ${root}: the daemon reads the root's paths only, in its checkout of ${place.remote} ${place.branch}`,
      );
    return join(place.root, inRoot);
  });
}

/** Whether `path` is `dir` or below it. */
export function isBelow(dir: string, path: string): boolean {
  const inDir = relative(dir, path);
  return !inDir.startsWith('..') && !isAbsolute(inDir);
}
