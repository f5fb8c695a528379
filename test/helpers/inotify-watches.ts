import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** inotify watches held by this process (each `inotify wd:` line of an inotify fd). */
export function inotifyWatches(): number {
  let watches = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (!readlinkSync(`/proc/self/fd/${fd}`).includes('inotify')) continue;
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
      watches += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
    } catch {
      // the fd closed while we looked
    }
  }
  return watches;
}
