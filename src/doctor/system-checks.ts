/** The machine around the daemon: desktop notifications, inotify limits, the clock. */
import { join } from 'node:path';
import { messageOf } from '../errors.js';
import { engineStateDir } from '../sessions/event-log.js';
import { fail, pass, skip, warn, type CheckResult, type DoctorContext } from './doctor-check.js';

export function checkNotifySend(ctx: DoctorContext): CheckResult {
  const id = 'notify-send';
  if (!ctx.settings.notifyVia.includes('desktop'))
    return skip(id, 'desktop notifications are off (notifyVia)');
  const found = ctx.probe.findProgram('notify-send', ctx.env.PATH ?? '');
  if (found !== null) return pass(id, `desktop notifications through ${found}`);
  return warn(
    id,
    'notifyVia has desktop, but notify-send is not on PATH: no desktop notifications',
    'install notify-send (apt-get install libnotify-bin), or set "notifyVia": "tmux" in directives/engine.json',
  );
}

export const WATCHES_FILE = '/proc/sys/fs/inotify/max_user_watches';
export const INSTANCES_FILE = '/proc/sys/fs/inotify/max_user_instances';

/** inotify instances a user's daemons, editors and tools share; fewer leaves too little room. */
const FEW_INSTANCES = 32;

const limitOf = (text: string | null): number | null => {
  const n = Number((text ?? '').trim());
  return text !== null && Number.isSafeInteger(n) && n > 0 ? n : null;
};

export async function checkInotify(ctx: DoctorContext): Promise<CheckResult> {
  const id = 'inotify';
  if (!ctx.settings.watch) return skip(id, 'watching is off (watch: false): reconcile passes only');
  if (ctx.root === null) return skip(id, 'no engine project here');
  // An unreadable limit counts as none known, as a missing one does.
  const watches = limitOf(await ctx.probe.readText(WATCHES_FILE).catch(() => null));
  const instances = limitOf(await ctx.probe.readText(INSTANCES_FILE).catch(() => null));
  if (watches === null) return skip(id, `no ${WATCHES_FILE}: not Linux inotify`);
  const { watcher } = ctx.settings;
  const needed = await ctx.probe.watchesNeeded([join(ctx.root, 'sessions')], watcher);
  const fix =
    'sudo sysctl fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512 (and the same in /etc/sysctl.d/ to keep it)';
  const per = watcher === 'chokidar' ? 'directory and markdown file' : 'directory';
  if (needed > watches)
    return fail(
      id,
      `sessions/ needs about ${needed} watches (one per ${per}, ${watcher}); the limit is ${watches}: changes would be missed`,
      fix,
    );
  if (needed * 2 > watches)
    return warn(
      id,
      `sessions/ needs about ${needed} of the ${watches} watches this user's programs share (${watcher})`,
      fix,
    );
  if (instances !== null && instances < FEW_INSTANCES)
    return warn(
      id,
      `max_user_instances is ${instances}: each watching program takes one or more`,
      fix,
    );
  return pass(
    id,
    `about ${needed} watches needed of ${watches}${instances === null ? '' : `; ${instances} instances`}`,
  );
}

/** Skews at or past these between the clock and a just-written file's mtime. */
const SKEW_WARN_MS = 2_000;
const SKEW_FAIL_MS = 60_000;

/** The first of `dirs` that takes a file (the project's state directory, else sessions/, else the root). */
async function stampIn(
  ctx: DoctorContext,
  dirs: string[],
): Promise<{ dir: string; stamp: Stamp } | { dir: string; error: string }> {
  let last = { dir: dirs[0] as string, error: 'no directory' };
  for (const dir of dirs) {
    try {
      return { dir, stamp: await ctx.probe.writeStamp(dir) };
    } catch (error) {
      last = { dir, error: messageOf(error) };
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return last;
    }
  }
  return last;
}

type Stamp = Awaited<ReturnType<DoctorContext['probe']['writeStamp']>>;

export async function checkClock(ctx: DoctorContext): Promise<CheckResult> {
  const id = 'clock';
  if (ctx.root === null) return skip(id, 'no engine project here');
  const sessions = join(ctx.root, 'sessions');
  const got = await stampIn(ctx, [engineStateDir(ctx.root), sessions, ctx.root]);
  if ('error' in got)
    return fail(
      id,
      `cannot write in ${got.dir}: ${got.error}`,
      `make ${got.dir} writable by this user`,
    );
  const { dir, stamp } = got;
  // The mtime should fall between the two clock reads; some file systems round it down.
  const skew =
    stamp.mtime < stamp.before
      ? stamp.mtime - stamp.before
      : Math.max(0, stamp.mtime - stamp.after);
  const tenths = Math.round(skew / 100);
  const shown =
    tenths === 0
      ? 'within 0.1 s'
      : `${(Math.abs(tenths) / 10).toFixed(1)} s ${tenths < 0 ? 'early' : 'late'}`;
  const fix = `sync the clocks of this machine and the file server of ${dir} (e.g. timedatectl set-ntp true)`;
  if (Math.abs(skew) >= SKEW_FAIL_MS)
    return fail(
      id,
      `a file just written in ${dir} is dated ${shown} against the clock: debounce, retries and heartbeats would misjudge`,
      fix,
    );
  if (Math.abs(skew) >= SKEW_WARN_MS)
    return warn(id, `a file just written in ${dir} is dated ${shown} against the clock`, fix);
  return pass(id, `a file just written in ${dir} is dated with the clock (${shown})`);
}
