/**
 * The one function that writes request files: a compare-and-swap under an inter-process lock.
 *
 * Take the lock, read, apply a pure edit (which may refuse: nothing is written), write a
 * temporary file beside the original, fsync, and rename it over the original only if the file
 * is byte-for-byte what the edit saw. A human's editor does not take our lock; if it saved in
 * between, the edit is re-applied to the new content (bounded retries), never written blindly.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import lockfile from 'proper-lockfile';
import { EngineError } from '../errors.js';
import { encodeText, fileError, readTextFile, type TextFile } from './read-text-file.js';

/** Returns the new text, or null when nothing needs to change. May throw to refuse the edit. */
export type TextEdit = (text: string) => string | null;

export interface UpdateResult {
  changed: boolean;
  path: string;
}

const MAX_ATTEMPTS = 8;
const LOCK_OPTIONS = {
  realpath: false,
  stale: 10_000,
  retries: { retries: 400, factor: 1.2, minTimeout: 2, maxTimeout: 50, randomize: true },
} as const;

/** The lock directory for a request file: hidden, beside it, ignored by the watcher. */
export function lockPathFor(realPath: string): string {
  return join(dirname(realPath), `.${basename(realPath)}.engine-lock`);
}

export async function updateRequestFile(path: string, edit: TextEdit): Promise<UpdateResult> {
  // Validate through the name the user gave, so messages name it; then edit the real file
  // (a symlink is followed, never replaced).
  await readTextFile(path);
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    throw fileError(path, error);
  }
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(real, { ...LOCK_OPTIONS, lockfilePath: lockPathFor(real) });
  } catch (error) {
    throw new EngineError(`Could not lock ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const result = await tryUpdate(real, edit);
      if (result !== 'conflict') return { changed: result === 'changed', path: real };
    }
    throw new EngineError(`${path} kept changing while it was being updated; nothing was written`);
  } finally {
    await release().catch(() => undefined);
  }
}

async function tryUpdate(
  real: string,
  edit: TextEdit,
): Promise<'changed' | 'unchanged' | 'conflict'> {
  const before = await stat(real, { bigint: true });
  const { file, bytes } = await readTextFile(real);
  const text = edit(file.text);
  if (text === null || text === file.text) return 'unchanged';
  const next: TextFile = { text, bom: file.bom };
  const temp = join(
    dirname(real),
    `.${basename(real)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  const handle = await open(temp, 'wx', Number(before.mode & 0o7777n));
  try {
    await handle.writeFile(encodeText(next));
    await handle.chmod(Number(before.mode & 0o7777n));
    await handle.sync();
  } finally {
    await handle.close();
  }
  if (!(await isUnchanged(real, before, bytes))) {
    await unlink(temp).catch(() => undefined);
    return 'conflict';
  }
  try {
    await rename(temp, real);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(real));
  return 'changed';
}

async function isUnchanged(
  real: string,
  before: import('node:fs').BigIntStats,
  bytes: Buffer,
): Promise<boolean> {
  const now = await stat(real, { bigint: true }).catch(() => null);
  if (
    !now ||
    now.ino !== before.ino ||
    now.size !== before.size ||
    now.mtimeNs !== before.mtimeNs
  ) {
    return false;
  }
  const current = await readFile(real).catch(() => null);
  return current !== null && current.equals(bytes);
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}
