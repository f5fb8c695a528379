/**
 * Fault injection for the crash tests (test/reliability): when ENGINE_FAILPOINT names a step, the
 * process kills itself with SIGKILL right there, as a crash or `kill -9` would. Unset in normal
 * use; the names are the steps of a dispatch, listed once here. The `wrapper-*` steps are checked
 * by the agent wrapper itself, a sh script (src/sessions/wrapper-script.ts).
 */
export const FAILPOINTS = [
  'after-read',
  'after-claim',
  'after-session-dir',
  'after-state',
  'after-spawn',
  'wrapper-after-start',
  'wrapper-before-exit-record',
] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

export function failpoint(name: Failpoint): void {
  if (process.env.ENGINE_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}
