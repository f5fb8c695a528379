/**
 * The queue-wide pause after a usage limit, `sessions/.engine/pause.json`:
 * `{"until", "reason", "since", "probe"?}`. On disk, so a daemon restarted (even after kill -9)
 * keeps it; written by the daemon, removed by the daemon when its probe passes or by
 * `engine resume`. The decisions over it are pure; the file helpers are the IO.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from '../files/update-request-file.js';
import { writeJsonAtomic } from '../files/write-json-atomic.js';
import { engineStateDir } from './event-log.js';

export interface ProbeRecord {
  file: string;
  noun: string;
  /** When the probe was chosen, before its claim. */
  since: string;
  /** Its session, once claimed. */
  session?: string;
}

export interface LimitPause {
  until: string;
  reason: string;
  since: string;
  probe?: ProbeRecord;
}

export function pausePath(root: string): string {
  return join(engineStateDir(root), 'pause.json');
}

/** The pause in force, or null (none, or a file that is not a pause: never guessed). */
export async function readPause(root: string): Promise<LimitPause | null> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(pausePath(root), 'utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.until !== 'string' || !Number.isFinite(Date.parse(v.until))) return null;
  const pause: LimitPause = {
    until: v.until,
    reason: typeof v.reason === 'string' ? v.reason : '',
    since: typeof v.since === 'string' ? v.since : v.until,
  };
  const p = v.probe as Record<string, unknown> | undefined;
  if (p && typeof p.file === 'string' && typeof p.noun === 'string' && typeof p.since === 'string')
    pause.probe = {
      file: p.file,
      noun: p.noun,
      since: p.since,
      ...(typeof p.session === 'string' ? { session: p.session } : {}),
    };
  return pause;
}

export async function writePause(root: string, pause: LimitPause): Promise<void> {
  await mkdir(engineStateDir(root), { recursive: true });
  await writeJsonAtomic(pausePath(root), pause);
}

/**
 * Removes the pause; resolves to the one removed, or null when there was none. Under the pause's
 * lock, so a daemon's change read before cannot write it back (`engine resume` runs in its own
 * process).
 */
export async function removePause(root: string): Promise<LimitPause | null> {
  return withPauseLock(root, async () => {
    const pause = await readPause(root);
    await rm(pausePath(root), { force: true });
    return pause;
  });
}

/** Runs `work` holding the pause file's lock, taken by every change of the pause. */
export async function withPauseLock<T>(root: string, work: () => Promise<T>): Promise<T> {
  await mkdir(engineStateDir(root), { recursive: true });
  return withFileLock(pausePath(root), work);
}

/**
 * The pause after a usage limit that lasts `until`: a later `until` than the pause in force
 * replaces it and drops its probe (the limit is back, so the probe's pass no longer says
 * anything); an earlier or equal one changes nothing.
 */
export function extendedPause(
  current: LimitPause | null,
  until: Date,
  reason: string,
  now: Date,
): LimitPause | null {
  if (current !== null && Date.parse(current.until) >= until.getTime()) return null;
  return { until: until.toISOString(), reason, since: current?.since ?? now.toISOString() };
}

export type Admission =
  /** No pause: claim it. */
  | { kind: 'go' }
  /** The pause has run out and no probe is out: this item goes first, alone. */
  | { kind: 'probe' }
  /** Not now: paused until `until`, or (`until` null) until the probe out now is judged. */
  | { kind: 'hold'; until: Date | null };

/** Whether a new claim may start under `pause` at `now`. */
export function admission(pause: LimitPause | null, now: Date): Admission {
  if (pause === null) return { kind: 'go' };
  const until = new Date(pause.until);
  if (now.getTime() < until.getTime()) return { kind: 'hold', until };
  if (pause.probe === undefined) return { kind: 'probe' };
  return { kind: 'hold', until: null };
}

/** One change of the pause at a time in this process: concurrent requeues each see the last. */
const updates = new Map<string, Promise<unknown>>();

/**
 * Reads the pause, asks `change` for the new one (undefined: leave it; null: remove it) and
 * writes it; resolves to the pause before and after.
 */
export function updatePause(
  root: string,
  change: (current: LimitPause | null) => LimitPause | null | undefined,
): Promise<{ before: LimitPause | null; after: LimitPause | null }> {
  const run = () =>
    withPauseLock(root, async () => {
      const before = await readPause(root);
      const next = change(before);
      if (next === undefined) return { before, after: before };
      if (next === null) await rm(pausePath(root), { force: true });
      else await writePause(root, next);
      return { before, after: next };
    });
  const previous = updates.get(root) ?? Promise.resolve();
  const result = previous.then(run, run);
  updates.set(
    root,
    result.catch(() => undefined),
  );
  return result;
}
