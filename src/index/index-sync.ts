/**
 * The sync before an answer, as watchman does it with cookie files: a watch reports a write
 * some time after it was made, but in the order the writes were made. The daemon creates a
 * uniquely named file in the watched root and waits for its event: every write finished before
 * that file was created has been reported by then, and marked dirty in the index. The file is
 * named so that no tool takes it for a request (not `.md`) and removed at once.
 */
import { unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The names of the sync files: what the index and the change stream skip. */
export const SYNC_FILE_PREFIX = '.engine-sync-';

export function isSyncFile(path: string): boolean {
  return basename(path).startsWith(SYNC_FILE_PREFIX);
}

export class IndexSync {
  private readonly waiting = new Map<string, () => void>();
  private count = 0;

  /** A watch event: true when it is a sync file's (the event is then used up here). */
  observe(path: string): boolean {
    if (!isSyncFile(path)) return false;
    this.waiting.get(path)?.();
    return true;
  }

  /**
   * Whether every write made in `root` before this call has been reported by its watch, within
   * `timeoutMs`. False when the sync file cannot be made (a read-only root) or its event does not
   * come (no watch, a backend that reports markdown files only).
   */
  async sync(root: string, timeoutMs: number): Promise<boolean> {
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
