/** The project's own files: §TAG_DISPATCH, the settings, the daemon lock and control socket. */
import { messageOf } from '../errors.js';
import { controlSocketPath } from '../control/protocol.js';
import { daemonLockPath, readDaemonLock } from '../daemon/daemon-lock.js';
import { parseDispatchTable } from '../dispatch/dispatch-table.js';
import { isAlive, type Liveness } from '../process/process-identity.js';
import { fail, pass, skip, warn, type CheckResult, type DoctorContext } from './doctor-check.js';

/** Why a lock's holder no longer holds it. */
const GONE: Partial<Record<Liveness, string>> = {
  dead: 'is gone',
  zombie: 'has exited',
  reused: 'is gone (the pid now names another process)',
  'previous-boot': 'ran before the last boot',
};

const NO_PROJECT_FIX = 'run engine init here, or give --root DIR';

export function checkTagsMd(ctx: DoctorContext): CheckResult {
  const id = 'tags-md';
  if (ctx.root === null || ctx.table === null)
    return fail(
      id,
      'not in an engine project (no directives/TAGS.md or directives/engine.json here or above)',
      NO_PROJECT_FIX,
    );
  if ('error' in ctx.table)
    return fail(id, ctx.table.error, 'make directives/TAGS.md readable by this user');
  try {
    const table = parseDispatchTable(ctx.table.text, ctx.table.path);
    const nouns = [...table.keys()].map((noun) => noun).join(', ');
    const whose = ctx.table.shipped
      ? `the table shipped with engine (no ${ctx.root}/directives/TAGS.md)`
      : ctx.table.path;
    return pass(id, `§TAG_DISPATCH of ${whose}: ${table.size} noun(s): ${nouns}`);
  } catch (error) {
    const message = messageOf(error);
    return fail(id, message, 'fix that line of §TAG_DISPATCH (docs/TAGS.md says what a row holds)');
  }
}

export function checkSettings(ctx: DoctorContext): CheckResult {
  const id = 'settings';
  if (ctx.settingsError !== null)
    return fail(
      id,
      ctx.settingsError,
      'fix that value in directives/engine.json or the ENGINE_* variable it names',
    );
  if (ctx.root === null) return skip(id, 'no engine project here');
  return pass(
    id,
    `directives/engine.json and ENGINE_* variables valid; agent profile ${ctx.agent.kind}`,
  );
}

export async function checkDaemonLock(ctx: DoctorContext): Promise<CheckResult> {
  const id = 'daemon-lock';
  if (ctx.root === null) return skip(id, 'no engine project here');
  const path = daemonLockPath(ctx.root);
  let text: string | null;
  try {
    text = await ctx.probe.readText(path);
  } catch (error) {
    // Not "no lock": a lock that cannot be read may well name a running daemon.
    return warn(
      id,
      messageOf(error),
      `make ${path} readable by this user, or run doctor as the daemon's user`,
    );
  }
  if (text === null) return pass(id, 'no daemon lock: no daemon runs here');
  const holder = await readDaemonLock(ctx.root);
  const remove = `rm ${path} (the next engine run also takes it over)`;
  if (holder === null) return warn(id, `${path} holds no process identity`, remove);
  const liveness = ctx.probe.liveness(holder);
  if (liveness === 'other-host')
    return warn(
      id,
      `the lock is held by pid ${holder.pid} on host ${holder.host}: no daemon can start here while it is`,
      `if that host's daemon is gone: rm ${path}`,
    );
  if (isAlive(liveness)) return pass(id, `a daemon runs (pid ${holder.pid})`);
  return warn(
    id,
    `stale lock: its daemon, pid ${holder.pid}, ${GONE[liveness] ?? 'is gone'}`,
    remove,
  );
}

export async function checkControlSocket(ctx: DoctorContext): Promise<CheckResult> {
  const id = 'control-socket';
  if (ctx.root === null) return skip(id, 'no engine project here');
  const path = controlSocketPath(ctx.root);
  const answers = await ctx.probe.socketAnswers(path);
  const holder = await readDaemonLock(ctx.root);
  const running = holder !== null && isAlive(ctx.probe.liveness(holder));
  if (answers === null)
    return running
      ? warn(
          id,
          `the daemon (pid ${holder.pid}) has no control socket: status and find read the files (slower)`,
          'see the daemon log for "no control socket" and restart it',
        )
      : pass(id, 'no control socket: no daemon runs here');
  if (answers) return pass(id, `the daemon answers on ${path}`);
  if (running)
    return warn(
      id,
      `the daemon (pid ${holder.pid}) does not answer on ${path}`,
      'restart the daemon (Ctrl-C, then engine run again)',
    );
  return warn(
    id,
    `stale control socket ${path}: no daemon answers`,
    `rm ${path} (the next engine run also replaces it)`,
  );
}
