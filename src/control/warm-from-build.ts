/**
 * The status warm-up's part in the tag index's build: each file the build keeps with its tags
 * gives a status its findings from the build's own read (and its own scan, when the fast path
 * made one), kept in the status cache; the warm-up after the build then reads only the rest.
 */
import { basename, dirname, join } from 'node:path';
import { realPathOrSelf } from '../files/real-path.js';
import type { SeenFiles } from '../index/tag-index.js';
import { keepFindings, type KeepContext } from '../status/collect-status.js';
import { statusScanOf } from '../tags/scan-pool.js';

/** keepFindings' context but its token, which each file takes before its read. */
export type WarmContext = Omit<KeepContext, 'token'>;

/** The build's `seen` (tag-index.ts): what each file it keeps gives the status of `context`. */
export function seenFilesOf(context: WarmContext): SeenFiles {
  const { cache, scan } = context;
  const realDirectory = realDirectories();
  return (path) => {
    // Before the read: a change reported after it (a cache forget) voids what is kept below.
    const token = cache.token();
    return async ({ text, mtimeMs, nlink, scan: fast }) => {
      const summary = fast ? statusScanOf(fast) : await scan(text).catch(() => null);
      if (summary === null) return;
      // As a status names it, by its real path. The build opened it without following a
      // symlink, and walks no symlinked directory: only a directory above it can be one.
      const file = join(realDirectory(dirname(path), token), basename(path));
      const read = { path, file, text, scan: summary, stats: { mtimeMs, nlink } };
      await keepFindings(read, { ...context, token });
    };
  };
}

/**
 * The real path of a directory, resolved once for the files read under the same cache token:
 * a token that moved since (any change reported, a directory renamed or replaced among them)
 * resolves it again.
 */
function realDirectories(): (dir: string, token: number) => string {
  const known = new Map<string, { real: string; token: number }>();
  return (dir, token) => {
    const kept = known.get(dir);
    if (kept?.token === token) return kept.real;
    const real = realPathOrSelf(dir);
    known.set(dir, { real, token });
    return real;
  };
}
