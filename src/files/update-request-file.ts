/**
 * The one function that writes request files: a compare-and-swap under an inter-process lock.
 *
 * Take the lock, read, apply a pure edit (which may refuse: nothing is written), write a
 * temporary file beside the original, fsync, and rename it over the original only if the file
 * is byte-for-byte what the edit saw. A human's editor does not take our lock; if it saved in
 * between, the edit is re-applied to the new content (bounded retries), never written blindly.
 *
 * A process appending to the file in place (O_APPEND, e.g. an agent's log lines) does not take
 * the lock either. Bytes appended since the read are added to the temporary file before the
 * rename, so the new file never lacks them (an editor saving in place could otherwise read it
 * and write it back without them). An append that lands between the last check and the rename
 * goes to the old inode, which the rename unlinks; the old inode is kept open, so such bytes are
 * read back and appended to the new file. An appender that opened the file before the rename
 * may write after that read-back (descheduled between its open and its write, on a loaded
 * machine): once an appender was seen at work during the edit, the carry-over goes on while
 * another process holds the old inode open for writing (Linux's /proc; a quiet pause where it
 * cannot tell), up to LATE_APPEND_WAIT_MS. Scanning every process's descriptors costs
 * milliseconds to tens of them, so an edit that saw no append does not pay it; it could then lose only the first
 * append of a writer that opened the file within the microseconds before the rename and was
 * descheduled there. An editor that saves in place (truncate, then write the whole text) may be
 * caught between the two: the carry-over then waits for its write (up to REWRITE_WAIT_MS).
 *
 * An editor that saves by its own rename between the last check and ours still loses its save
 * to ours. Both run synchronously, yet on a loaded machine the process can be descheduled in
 * between for a time slice. Closing it needs a conditional rename, which POSIX lacks. Two stand-ins were
 * tried and dropped (docs/RELIABILITY.md): renameat2(RENAME_EXCHANGE) through a native addon,
 * which @parcel/watcher does not report, so the daemon missed writes; and moving the original
 * aside to hard-link the new file in, which leaves the name free for an instant, where a shell's
 * `>>` creates a one-line file that one of the two writes must then displace.
 */
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import {
  closeSync,
  fstatSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  statSync,
} from 'node:fs';
import { appendFile, open, realpath, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import lockfile from 'proper-lockfile';
import { EngineError, isErrnoException } from '../errors.js';
import { openDescriptors, type OpenDescriptor, procReadable } from '../process/open-files.js';
import { boundedName, NAME_MAX } from './bounded-name.js';
import {
  encodeText,
  fileError,
  openRequestFile,
  readError,
  readOpenFile,
  readTextFile,
  type TextFile,
} from './read-text-file.js';

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
/** How long the carry-over waits for an in-place save caught between its truncation and write. */
const REWRITE_WAIT_MS = 500;
/** How long the carry-over waits for an appender that still holds the replaced inode open. */
const LATE_APPEND_WAIT_MS = 2000;
/** Where /proc cannot tell who holds the replaced inode: how long it must stay quiet. */
const LATE_APPEND_QUIET_MS = 50;
/** How often the replaced inode is looked at while another process holds it open for writing. */
const LATE_APPEND_POLL_MS = 10;
/** Rounds of adding in-place appends to the new file before the rename. */
const MAX_CATCH_UP_ROUNDS = 4;
const LOCK_OPTIONS = { realpath: false, stale: 10_000 } as const;
/** Waiting for a lock another writer holds: up to about 20 s in all, in growing steps. */
const LOCK_RETRIES = 400;
const LOCK_WAIT_MIN_MS = 2;
const LOCK_WAIT_MAX_MS = 50;
const LOCK_SUFFIX = '.engine-lock';

/**
 * The lock directory for a request file: hidden, beside it, ignored by the watcher. A name too
 * long for `.<name>.engine-lock` is shortened (bounded-name.ts); any other stays as it is, so
 * writers of every version agree on the lock.
 */
export function lockPathFor(realPath: string): string {
  const name = boundedName(basename(realPath), NAME_MAX - 1 - LOCK_SUFFIX.length);
  return join(dirname(realPath), `.${name}${LOCK_SUFFIX}`);
}

/** A new temporary file beside a request file, hidden, its name within NAME_MAX. */
function tempPathFor(realPath: string): string {
  const tail = `.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const name = boundedName(basename(realPath), NAME_MAX - 1 - tail.length);
  return join(dirname(realPath), `.${name}${tail}`);
}

/**
 * Takes the file's lock, waiting only while another writer holds it. Any other failure (a
 * read-only directory, the lock's path taken by a file) is reported at once: proper-lockfile
 * would retry it as long as a held lock, and the daemon would log nothing for 20 s.
 */
async function lock(real: string): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await lockfile.lock(real, { ...LOCK_OPTIONS, lockfilePath: lockPathFor(real) });
    } catch (error) {
      if (!isErrnoException(error) || error.code !== 'ELOCKED' || attempt === LOCK_RETRIES) {
        throw error;
      }
    }
    const wait = LOCK_WAIT_MIN_MS * 1.2 ** attempt * (1 + Math.random());
    await new Promise((resolve) => setTimeout(resolve, Math.min(LOCK_WAIT_MAX_MS, wait)));
  }
}

/**
 * Runs `work` holding the lock of the file at `realPath` (which need not exist), the same lock
 * `updateRequestFile` takes: for a small state file that two processes change.
 */
export async function withFileLock<T>(realPath: string, work: () => Promise<T>): Promise<T> {
  const release = await lock(realPath);
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
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
    release = await lock(real);
  } catch (error) {
    throw new EngineError(`Could not lock ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
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

async function tryUpdate(
  path: string,
  real: string,
  edit: TextEdit,
): Promise<'changed' | 'unchanged' | 'conflict'> {
  // One descriptor on the inode that is read: its size after the rename tells whether anything
  // was appended to it that the new file does not have.
  let original: number;
  try {
    original = openRequestFile(real);
  } catch (error) {
    throw fileError(path, error);
  }
  try {
    const before = fstatSync(original, { bigint: true });
    const read = readOpenFile(original);
    if (read.kind !== 'text') throw readError(path, read);
    const { bytes, file } = read;
    const text = edit(file.text);
    if (text === null || text === file.text) return 'unchanged';
    // Changed already (an editor saved while we parsed): retry now, before paying for an fsync.
    if (!(await sameInode(real, before))) return 'conflict';
    const next = encodeText({ text, bom: file.bom } satisfies TextFile);
    const temp = tempPathFor(real);
    await writeTemp(temp, next, before);
    // Appended in place since the read: still our file. The appended bytes go into the new file
    // before it replaces the old one: an editor saving in place that read the new file before a
    // later carry-over would write it back without them. A bounded number of rounds, then the
    // rename and the carry-over, so a chatty appender (a log) cannot starve the edit.
    let seen = bytes;
    let written = next;
    for (let round = 0; ; round++) {
      // The last check and the rename run in one synchronous step: nothing else in this process
      // runs between them, which leaves an editor's own rename the narrowest window this process
      // can give it (see the module comment).
      let appended: Buffer | null;
      try {
        appended = appendedSince(real, before, seen);
        if (appended !== null && (appended.length === 0 || round === MAX_CATCH_UP_ROUNDS)) {
          renameSync(temp, real);
          break;
        }
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      if (appended === null) {
        await unlink(temp).catch(() => undefined);
        return 'conflict';
      }
      const chunk = joinTail(seen, written, appended);
      try {
        await appendToTemp(temp, chunk);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      seen = Buffer.concat([seen, appended]);
      written = Buffer.concat([written, chunk]);
    }
    const appenderSeen = seen.length > bytes.length;
    await carryOverAppends(original, before, { seen, written, appenderSeen }, real);
    await syncDirectory(dirname(real));
    return 'changed';
  } finally {
    closeSync(original);
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
 * null when anything else happened (another inode, a rewrite). Synchronous, for the last check,
 * which the rename follows at once: the inode is looked at after the content, so the gap between
 * that look and the rename is a single system call (with the content read in that gap, editors
 * saving by rename at 100 Hz lost about four times as many saves).
 */
function appendedSince(real: string, before: BigIntStats, seen: Buffer): Buffer | null {
  let current: Buffer;
  try {
    current = readFileSync(real);
  } catch {
    return null;
  }
  if (current.length < seen.length || !current.subarray(0, seen.length).equals(seen)) return null;
  const now = statSync(real, { bigint: true, throwIfNoEntry: false });
  // Grown since the read is fine: those bytes are carried over from the old inode.
  if (!now || now.ino !== before.ino || now.dev !== before.dev || now.size < current.length) {
    return null;
  }
  return current.subarray(seen.length);
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

interface Replaced {
  /** The old inode's bytes the new file has. */
  seen: Buffer;
  /** The new file's bytes. */
  written: Buffer;
  /** Whether something appended in place while the edit ran. */
  appenderSeen: boolean;
}

/**
 * Bytes appended in place to the replaced inode after `seen` (between the last check and the
 * rename, or by a writer that opened it before the rename) are appended to the new file, which
 * holds `written`. Bounded by LATE_APPEND_WAIT_MS: a writer that keeps the old inode open for
 * good (`tee -a`) writes there after that unread.
 */
async function carryOverAppends(
  original: number,
  before: BigIntStats,
  { seen, written, appenderSeen }: Replaced,
  real: string,
): Promise<void> {
  let offset = seen.length;
  let active = appenderSeen;
  let lastLook = false;
  let holders: OpenDescriptor[] | null = null;
  const deadline = Date.now() + LATE_APPEND_WAIT_MS;
  for (;;) {
    const size = await settledSize(original, offset);
    if (size <= offset) {
      if (!active || lastLook || Date.now() > deadline) return;
      // Held open for writing by another process: it may still append. Not held: whatever it
      // wrote is in the inode by now, so one more look finds it.
      holders = await stillWriting(holders, before);
      lastLook = holders.length === 0;
      continue;
    }
    const tail = Buffer.alloc(size - offset);
    const bytesRead = readSync(original, tail, 0, tail.length, offset);
    if (bytesRead === 0) return;
    let chunk: Buffer = tail.subarray(0, bytesRead);
    if (offset === seen.length) chunk = joinTail(seen, written, chunk);
    await appendFile(real, chunk);
    offset += bytesRead;
    active = true;
    lastLook = false;
    if (Date.now() > deadline) return;
  }
}

/**
 * The other processes' descriptors open for writing on the replaced inode, after a pause when
 * there are any, so the caller looks at the inode again a little later. The first call scans
 * every process (an unlinked inode cannot be opened again by its name, so no holder is missed);
 * the later ones look only at the holders found then. Where that cannot be told (no /proc, or
 * processes of another user that might hold it), a quiet pause and none.
 */
async function stillWriting(
  holders: OpenDescriptor[] | null,
  inode: BigIntStats,
): Promise<OpenDescriptor[]> {
  let hidden = !procReadable();
  const found = (
    holders ??
    openDescriptors(() => {
      hidden = true;
    })
  ).filter((descriptor) => descriptor.pid !== process.pid && writingTo(descriptor, inode));
  const pause = found.length > 0 ? LATE_APPEND_POLL_MS : hidden ? LATE_APPEND_QUIET_MS : 0;
  if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  return found;
}

/**
 * Whether a descriptor is open for writing (its flags' access mode not O_RDONLY) on the inode,
 * which is unlinked: the link's text is looked at first, so no other descriptor's file is
 * stat-ed (a dead network mount could hang that).
 */
function writingTo({ path, info }: OpenDescriptor, inode: BigIntStats): boolean {
  try {
    if (!readlinkSync(path).endsWith(' (deleted)')) return false;
    const target = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (!target || target.ino !== inode.ino || target.dev !== inode.dev) return false;
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(info, 'utf8'));
    return flags === null || (parseInt(flags[1]!, 8) & 3) !== 0;
  } catch {
    return false; // Closed meanwhile.
  }
}

/**
 * The replaced inode's size. Shorter than what was carried so far, an editor saving in place has
 * truncated it (open with O_TRUNC) and not yet written the text back: wait for that write,
 * briefly, rather than lose the save with the inode.
 */
async function settledSize(original: number, offset: number): Promise<number> {
  const deadline = Date.now() + REWRITE_WAIT_MS;
  for (;;) {
    const { size } = fstatSync(original);
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
