/**
 * The one function that writes request files: a compare-and-swap under an inter-process lock.
 *
 * Take the lock, read, apply a pure edit (which may refuse: nothing is written), write a
 * temporary file beside the original, fsync, and put it in the original's place only if the
 * original is still what the edit saw (replace-if-unchanged.ts). A human's editor does not take
 * our lock; if it saved in between, even by its own rename an instant before ours, the edit is
 * re-applied to the new content (bounded retries), never written blindly.
 *
 * A process appending to the file in place (O_APPEND, e.g. an agent's log lines) does not take
 * the lock either. Bytes appended since the read are added to the temporary file before the
 * replace, so the new file never lacks them (an editor saving in place could otherwise read it
 * and write it back without them). An append that lands between the last check and the replace
 * goes to the old inode; the old inode is kept open, so such bytes are read back and appended to
 * the new file. In-place appends are therefore never lost. An editor that saves in place
 * (truncate, then write the whole text) may be caught between the two: the carry-over then
 * waits for its write (up to REWRITE_WAIT_MS).
 */
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { constants, existsSync } from 'node:fs';
import {
  appendFile,
  lstat,
  open,
  readFile,
  readlink,
  realpath,
  stat,
  unlink,
} from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { EngineError, isErrnoException } from '../errors.js';
import {
  decodeText,
  encodeText,
  fileError,
  MAX_PARSE_BYTES,
  type TextFile,
} from './read-text-file.js';
import { asidePathFor, replaceIfUnchanged, restoreSetAside } from './replace-if-unchanged.js';

/** Returns the new text, or null when nothing needs to change. May throw to refuse the edit. */
export type TextEdit = (text: string) => string | null;

export interface UpdateResult {
  changed: boolean;
  path: string;
}

/**
 * Re-applying after a conflict: at least MIN_ATTEMPTS times, and on for RETRY_BUDGET_MS, since
 * one attempt parses the file and, on a busy machine, can outlast the gap between an editor's
 * saves; never more than MAX_ATTEMPTS times.
 */
const MIN_ATTEMPTS = 8;
const MAX_ATTEMPTS = 64;
const RETRY_BUDGET_MS = 2000;
/** Rounds of carrying appends over from the replaced inode, for writers that keep appending. */
const MAX_CARRY_ROUNDS = 16;
/** How long the carry-over waits for an in-place save caught between its truncation and write. */
const REWRITE_WAIT_MS = 500;
/** Rounds of adding in-place appends to the new file before the replace. */
const MAX_CATCH_UP_ROUNDS = 4;
const LOCK_OPTIONS = {
  realpath: false,
  stale: 10_000,
  retries: { retries: 400, factor: 1.2, minTimeout: 2, maxTimeout: 50, randomize: true },
} as const;

/** The lock directory for a request file: hidden, beside it, ignored by the watcher. */
export function lockPathFor(realPath: string): string {
  return join(dirname(realPath), `.${basename(realPath)}.engine-lock`);
}

export interface UpdateOptions {
  /** How long to keep re-applying the edit to a file that keeps changing (default 2000 ms). */
  retryBudgetMs?: number;
}

export async function updateRequestFile(
  path: string,
  edit: TextEdit,
  options: UpdateOptions = {},
): Promise<UpdateResult> {
  // Edit the real file (a symlink is followed, never replaced); messages name the path given.
  const real = await resolveTarget(path);
  const release = await lockRequestFile(path, real);
  try {
    restoreSetAside(real);
    const deadline = Date.now() + (options.retryBudgetMs ?? RETRY_BUDGET_MS);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (attempt >= MIN_ATTEMPTS && Date.now() > deadline) break;
      const result = await tryUpdate(path, real, edit);
      if (result !== 'conflict') return { changed: result === 'changed', path: real };
    }
    throw new EngineError(`${path} kept changing while it was being updated; nothing was written`);
  } catch (error) {
    // A refusal from the edit passes through; a system error is named by the file.
    if (isErrnoException(error) && !(error instanceof EngineError)) {
      throw new EngineError(`Cannot update ${path}: ${error.message}`, { cause: error });
    }
    throw error;
  } finally {
    await release().catch(() => undefined);
  }
}

/** What waitForWriter found: whether the file is there now, and whether it put it back. */
export interface AfterWriter {
  present: boolean;
  restored: boolean;
}

/**
 * For a reader that found a request file missing: it may be between a writer's move aside and
 * link (or left aside by a writer that was killed there). Waits for that writer's lock and puts
 * back an original left aside.
 */
export async function waitForWriter(path: string): Promise<AfterWriter> {
  const real = await resolveTarget(path).catch(() => null);
  if (real === null) return { present: false, restored: false };
  let restored = false;
  if (existsSync(lockPathFor(real)) || existsSync(asidePathFor(real))) {
    const release = await lockRequestFile(path, real).catch(() => null);
    if (release) {
      try {
        restored = restoreSetAside(real);
      } finally {
        await release().catch(() => undefined);
      }
    }
  }
  return { present: existsSync(real), restored };
}

async function lockRequestFile(path: string, real: string): Promise<() => Promise<void>> {
  try {
    return await lockfile.lock(real, { ...LOCK_OPTIONS, lockfilePath: lockPathFor(real) });
  } catch (error) {
    throw new EngineError(`Could not lock ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** How many symbolic links resolveTarget follows by hand before it calls it a loop. */
const MAX_LINKS = 40;

/**
 * The real path of a request file. When it is missing (perhaps only for the instant a writer has
 * it aside), the real path it would have: its lock and its aside are named after that.
 */
async function resolveTarget(path: string, links = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if (!isErrnoException(error) || error.code !== 'ENOENT') throw fileError(path, error);
  }
  const entry = await lstat(path).catch(() => null);
  if (entry?.isSymbolicLink() && links < MAX_LINKS) {
    const target = await readlink(path).catch(() => null);
    if (target !== null) return resolveTarget(resolve(dirname(path), target), links + 1);
  }
  try {
    return join(await realpath(dirname(path)), basename(path));
  } catch (error) {
    throw fileError(path, error);
  }
}

async function tryUpdate(
  path: string,
  real: string,
  edit: TextEdit,
): Promise<'changed' | 'unchanged' | 'conflict'> {
  // One handle on the inode that is read: its size after the replace tells whether anything was
  // appended to it that the new file does not have.
  let original: FileHandle;
  try {
    // Non-blocking, so a named pipe put in the file's place cannot stall the writer.
    original = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw fileError(path, error);
  }
  try {
    const before = await original.stat({ bigint: true });
    if (!before.isFile()) throw new EngineError(`Not a regular file: ${path}`);
    if (before.size > BigInt(MAX_PARSE_BYTES)) {
      throw new EngineError(
        `File too large to parse safely: ${path} (${before.size} bytes, limit ${MAX_PARSE_BYTES})`,
      );
    }
    const bytes = await original.readFile();
    const file = decodeText(bytes);
    if (!file) throw new EngineError(`Not a UTF-8 text file: ${path}`);
    const text = edit(file.text);
    if (text === null || text === file.text) return 'unchanged';
    // Changed already (an editor saved while we parsed): retry now, before paying for an fsync.
    if (!(await sameInode(real, before))) return 'conflict';
    const next = encodeText({ text, bom: file.bom } satisfies TextFile);
    const temp = join(
      dirname(real),
      `.${basename(real)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    await writeTemp(temp, next, before);
    // Appended in place since the read: still our file. The appended bytes go into the new file
    // before it replaces the old one: an editor saving in place that read the new file before a
    // later carry-over would write it back without them. A bounded number of rounds, then the
    // replace and the carry-over, so a chatty appender (a log) cannot starve the edit.
    let seen = bytes;
    let written = next;
    for (let round = 0; round < MAX_CATCH_UP_ROUNDS; round++) {
      const appended = await appendedSince(real, before, seen);
      if (appended === null) {
        await unlink(temp).catch(() => undefined);
        return 'conflict';
      }
      if (appended.length === 0) break;
      const chunk = joinTail(seen, written, appended);
      await appendToTemp(temp, chunk);
      seen = Buffer.concat([seen, appended]);
      written = Buffer.concat([written, chunk]);
    }
    let outcome;
    try {
      outcome = replaceIfUnchanged(real, temp, before);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    if (outcome === 'conflict') {
      await unlink(temp).catch(() => undefined);
      return 'conflict';
    }
    await carryOverAppends(original, seen, written, real);
    await syncDirectory(dirname(real));
    return 'changed';
  } finally {
    await original.close();
  }
}

/** Writes the new content beside the original with its mode (and owner, where allowed). */
async function writeTemp(temp: string, content: Buffer, before: BigIntStats): Promise<void> {
  const mode = Number(before.mode & 0o7777n);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(content);
    const created = await handle.stat({ bigint: true });
    if (created.uid !== before.uid || created.gid !== before.gid) {
      // Keep the owner and group where we may (as root, or a group we belong to); never fail.
      await handle.chown(Number(before.uid), Number(before.gid)).catch(() => undefined);
    }
    // After chown, which may clear set-id bits; the umask does not apply to chmod.
    await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
}

async function sameInode(real: string, before: BigIntStats): Promise<boolean> {
  const now = await stat(real, { bigint: true }).catch(() => null);
  return now !== null && now.ino === before.ino && now.dev === before.dev;
}

/**
 * The bytes appended in place since `before`/`seen` were read (empty: nothing happened), or
 * null when anything else happened (another inode, a rewrite).
 */
async function appendedSince(
  real: string,
  before: BigIntStats,
  seen: Buffer,
): Promise<Buffer | null> {
  const now = await stat(real, { bigint: true }).catch(() => null);
  if (!now || now.ino !== before.ino || now.dev !== before.dev || now.size < before.size) {
    return null;
  }
  const current = await readFile(real).catch(() => null);
  if (current === null || current.length < seen.length) return null;
  return current.subarray(0, seen.length).equals(seen) ? current.subarray(seen.length) : null;
}

async function appendToTemp(temp: string, chunk: Buffer): Promise<void> {
  const handle = await open(temp, 'a');
  try {
    await handle.writeFile(chunk);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Bytes appended in place to the replaced inode after `seen` (between the last check and the
 * replace, or by a writer that opened it before the replace) are appended to the new file, which
 * holds `written`.
 */
async function carryOverAppends(
  original: FileHandle,
  seen: Buffer,
  written: Buffer,
  real: string,
): Promise<void> {
  let offset = seen.length;
  for (let round = 0; round < MAX_CARRY_ROUNDS; round++) {
    const size = await settledSize(original, offset);
    if (size <= offset) return;
    const tail = Buffer.alloc(size - offset);
    const { bytesRead } = await original.read(tail, 0, tail.length, offset);
    if (bytesRead === 0) return;
    let chunk: Buffer = tail.subarray(0, bytesRead);
    if (offset === seen.length) chunk = joinTail(seen, written, chunk);
    await appendFile(real, chunk);
    offset += bytesRead;
  }
}

/**
 * The replaced inode's size. Shorter than what was carried so far, an editor saving in place has
 * truncated it (open with O_TRUNC) and not yet written the text back: wait for that write,
 * briefly, rather than lose the save with the inode.
 */
async function settledSize(original: FileHandle, offset: number): Promise<number> {
  const deadline = Date.now() + REWRITE_WAIT_MS;
  for (;;) {
    const { size } = await original.stat();
    if (size >= offset || Date.now() > deadline) return size;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * An append continues the original's last line. When that line ends the file without a line
 * ending and the edit changed it (a Tags line at the end of the file), start a new line instead
 * of gluing the appended text onto the edited tag.
 */
function joinTail(original: Buffer, next: Buffer, tail: Buffer): Buffer {
  if (original.length === 0 || original[original.length - 1] === 0x0a) return tail;
  const lastLine = original.subarray(original.lastIndexOf(0x0a) + 1);
  if (
    next.length >= lastLine.length &&
    next.subarray(next.length - lastLine.length).equals(lastLine)
  )
    return tail;
  const eol = next.includes('\r\n') ? '\r\n' : '\n';
  return Buffer.concat([Buffer.from(eol), tail]);
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}
