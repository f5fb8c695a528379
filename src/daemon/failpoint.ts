/**
 * Fault injection for the crash tests (test/reliability): when ENGINE_FAILPOINT names a step, the
 * process kills itself with SIGKILL right there, as a crash or `kill -9` would. Unset in normal
 * use; the names are the steps of a dispatch, listed once here. The `wrapper-*` steps are checked
 * by the agent wrapper itself, a sh script (src/sessions/wrapper-script.ts). Pause points, below,
 * hold a step instead, for the race tests.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const FAILPOINTS = [
  'after-read',
  'after-claim',
  'after-session-dir',
  'after-state',
  'after-spawn',
  'after-done-mark',
  'after-done-event',
  'wrapper-after-start',
  'wrapper-before-exit-record',
] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

export function failpoint(name: Failpoint): void {
  if (process.env.ENGINE_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}

/** Steps where a race test can hold a running daemon (ENGINE_PAUSEPOINT). */
export type Pausepoint = 'before-requeue' | 'before-look-again';

const pausedAt = new Set<Pausepoint>();

/**
 * When ENGINE_PAUSEPOINT names the step, the first time the process reaches it: creates
 * `<step>.paused` in ENGINE_PAUSE_DIR, then waits, without blocking the event loop, until
 * `<step>.resume` appears there. A test acts at that exact moment while the rest of the daemon
 * runs on. Unset in normal use.
 */
export async function pausepoint(name: Pausepoint): Promise<void> {
  const dir = process.env.ENGINE_PAUSE_DIR;
  if (process.env.ENGINE_PAUSEPOINT !== name || !dir || pausedAt.has(name)) return;
  pausedAt.add(name);
  writeFileSync(join(dir, `${name}.paused`), `${process.pid}\n`);
  while (!existsSync(join(dir, `${name}.resume`))) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
