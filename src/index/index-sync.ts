/**
 * The sync before an answer, as watchman does it with cookie files: a watch reports a write
 * some time after it was made, but in the order the writes were made. The daemon creates a
 * uniquely named file in the watched root and waits for its event: every write finished before
 * that file was created has been reported by then, and marked dirty in the index. The file is
 * named so that no tool takes it for a request (not `.md`) and removed at once.
 */
import { readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The names of the sync files: `.engine-sync-<pid>-<n>`. */
const SYNC_FILE_PREFIX = '.engine-sync-';
const ANY_SYNC_FILE = /^\.engine-sync-([1-9][0-9]*)-[1-9][0-9]*$/;

/**
 * Removes the sync files a killed daemon left in `root`: only names of the exact pattern, of a
 * process that no longer runs.
 */
export function removeDeadSyncFiles(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = ANY_SYNC_FILE.exec(name)?.[1];
    if (pid === undefined || isRunning(Number(pid))) continue;
    try {
      unlinkSync(join(root, name));
    } catch {
      // Gone already, or not ours to remove: left as it is.
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class IndexSync {
  private readonly waiting = new Map<string, () => void>();
  /** The directories this daemon made sync files in. */
  private readonly roots = new Set<string>();
  private count = 0;

  /**
   * A watch event: true when it is one of this daemon's sync files (the event is then used up
   * here). Only the exact names it made: a user's `.engine-sync-notes.md` is a file like others.
   */
  observe(path: string): boolean {
    if (!this.madeHere(path)) return false;
    this.waiting.get(path)?.();
    return true;
  }

  /** Its own pattern, in a root it synced, numbered up to its count (a late unlink event). */
  private madeHere(path: string): boolean {
    if (!this.roots.has(dirname(path))) return false;
    const own = new RegExp(`^\\${SYNC_FILE_PREFIX}${process.pid}-([1-9][0-9]*)$`);
    const n = own.exec(basename(path))?.[1];
    return n !== undefined && Number(n) <= this.count;
  }

  /**
   * Whether every write made in `root` before this call has been reported by its watch, within
   * `timeoutMs`. False when the sync file cannot be made (a read-only root) or its event does not
   * come (no watch, a backend that reports markdown files only).
   */
  async sync(root: string, timeoutMs: number): Promise<boolean> {
    this.roots.add(root);
    const path = join(root, `${SYNC_FILE_PREFIX}${process.pid}-${++this.count}`);
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<boolean>((resolve) => {
      this.waiting.set(path, () => resolve(true));
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      writeFileSync(path, '', { flag: 'wx', mode: 0o600 });
    } catch {
      this.waiting.delete(path);
      clearTimeout(timer);
      return false;
    }
    try {
      return await seen;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(path);
      try {
        unlinkSync(path);
      } catch {
        // Gone already: nothing to clean.
      }
    }
  }
}
