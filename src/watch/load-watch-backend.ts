/**
 * Picks the watch backend: @parcel/watcher, or chokidar where parcel cannot load or watch. Apart
 * from watch-backend (the interface they share), so the backends never import their factory.
 */
import { stat } from 'node:fs/promises';
import type { WatchBackend, WatcherKind } from './watch-backend.js';

type Loader = (kind: WatcherKind) => Promise<WatchBackend>;

const importBackend: Loader = async (kind) => {
  if (kind === 'node') return (await import('./node-backend.js')).nodeBackend;
  return kind === 'parcel'
    ? (await import('./parcel-backend.js')).parcelBackend
    : (await import('./chokidar-backend.js')).chokidarBackend;
};

/**
 * The backend to watch with. @parcel/watcher needs a prebuilt binary for this platform: when it
 * cannot load, chokidar is used. When it loads but cannot subscribe to a tree that still exists
 * (twice: a file removed during its initial walk fails it once; an unreadable directory fails it
 * always), that tree is watched with chokidar. Either fallback is told to `onFallback` in one line.
 */
export async function loadWatchBackend(
  kind: WatcherKind,
  onFallback: (message: string) => void,
  load: Loader = importBackend,
): Promise<WatchBackend> {
  if (kind !== 'parcel') return load(kind);
  let parcel: WatchBackend;
  try {
    parcel = await load('parcel');
  } catch (error) {
    onFallback(
      `@parcel/watcher cannot be loaded here (${firstLine(error)}); watching with chokidar, which uses one inotify watch per file`,
    );
    return load('chokidar');
  }
  return {
    kind: 'parcel',
    async subscribe(dir, ignore, handlers) {
      let lastError: unknown;
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          return await parcel.subscribe(dir, ignore, handlers);
        } catch (error) {
          lastError = error;
        }
      }
      // Gone meanwhile: nothing to watch here; the caller plans again.
      if (!(await isDirectory(dir))) throw asError(lastError);
      const chokidar = await load('chokidar');
      onFallback(
        `@parcel/watcher cannot watch ${dir} (${firstLine(lastError)}); watching it with chokidar, which uses one inotify watch per file`,
      );
      return chokidar.subscribe(dir, ignore, handlers);
    },
  };
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
