/**
 * @parcel/watcher: one recursive subscription per tree, one inotify watch per directory, read by
 * its own thread (so a busy event loop does not overflow the kernel queue), no record per file in
 * JavaScript. It does not follow symlinked directories. On Linux it watches a directory that
 * arrives, but neither looks inside it nor watches the directories already in it: the files a new
 * directory holds when it is reported are reported here from a listing, and a directory that
 * arrives holding directories (mkdir -p, a tree moved in) makes the subscription stale, to be
 * opened again. A directory removed and created again between two reads of parcel's thread is
 * reported as an update (parcel merges the two), so an update of a directory born after the
 * subscription is looked inside too. Importing this module throws where no prebuilt binary exists
 * for the platform.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import parcel from '@parcel/watcher';
import { isIgnoredDirectoryName, type IgnoreRules } from '../tags/walk-markdown.js';
import type { WatchBackend, WatchEventType, WatchHandlers } from './watch-backend.js';

const TYPES: Record<parcel.EventType, WatchEventType> = {
  create: 'add',
  update: 'change',
  delete: 'unlink',
};

/** What this backend uses of @parcel/watcher (a stand-in in tests). */
export interface ParcelWatcher {
  subscribe: (
    dir: string,
    callback: (error: Error | null, events: parcel.Event[]) => void,
    options: { ignore: RegExp[] },
  ) => Promise<{ unsubscribe: () => Promise<void> }>;
}

export function parcelBackendOver(watcher: ParcelWatcher): WatchBackend {
  return {
    kind: 'parcel',
    async subscribe(dir, ignore, handlers) {
      // A little before the subscription: the birth time of the kernel's coarse clock may lag.
      const since = Date.now() - 1000;
      let ended = false;
      const subscription = await watcher.subscribe(
        dir,
        (error, events) => {
          if (ended) return;
          if (error) {
            // parcel (2.6, Linux) reports an error once and drops the subscription's callback:
            // mostly its thread ended (a signal interrupted its poll: EINTR from a child's exit).
            ended = true;
            handlers.onError(error);
            handlers.onStale();
          }
          for (const event of events) {
            handlers.onEvent(TYPES[event.type], event.path);
            if (event.type === 'create') void lookInside(event.path, ignore, handlers);
            else if (event.type === 'update') void lookInside(event.path, ignore, handlers, since);
          }
        },
        { ignore: ignorePattern(ignore) },
      );
      // After an error, unsubscribing may wait forever for the ended thread, on the main thread
      // (~InotifyBackend; the daemon hung): the subscription is left as it is, silent, and its
      // inotify instance with it. The reopened watch gets a new backend: parcel drops the old.
      return { close: () => (ended ? Promise.resolve() : subscription.unsubscribe()) };
    },
  };
}

export const parcelBackend: WatchBackend = parcelBackendOver(parcel);

/**
 * One regular expression, matched against each path relative to the watched directory: never
 * descended into, never reported. parcel matches it against every path of the tree when it
 * subscribes, with std::regex: one glob per rule cost 0.65 s at 50,000 files, one glob (which
 * picomatch turns into a lookahead at every character) about 0.2 s of CPU, this about half that.
 */
function ignorePattern(rules: IgnoreRules): RegExp[] {
  const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const alternatives = [
    ...rules.directoryNames.map((name) => `(?:^|\\/)${escape(name)}`),
    // A name ending in a suffix: the suffix at a segment's end, whatever comes before it.
    ...rules.directorySuffixes.map(escape),
  ];
  return alternatives.length === 0 ? [] : [new RegExp(`(?:${alternatives.join('|')})(?:\\/|$)`)];
}

/**
 * `path` was just created: if it is a directory, what it already holds was never reported. With
 * `bornAfter` (an update), only a directory born after that time (ms since the epoch) counts, or
 * one whose birth time the file system does not keep: an older one only changed its attributes.
 */
async function lookInside(
  path: string,
  ignore: IgnoreRules,
  handlers: WatchHandlers,
  bornAfter?: number,
): Promise<void> {
  const info = await lstat(path).catch(() => null);
  if (!info?.isDirectory()) return;
  if (bornAfter !== undefined && info.birthtimeMs > 0 && info.birthtimeMs < bornAfter) return;
  const entries = await readdir(path, { withFileTypes: true }).catch(() => null);
  if (!entries) return;
  if (entries.some((e) => e.isDirectory() && !isIgnoredDirectoryName(e.name, ignore))) {
    handlers.onStale();
    return;
  }
  for (const entry of entries) handlers.onEvent('add', join(path, entry.name));
}
