/**
 * The agent wrapper: a constant POSIX sh script, run as
 * `/bin/sh -c WRAPPER_SCRIPT engine-agent <session-dir> <heartbeat-seconds> <agent argv...>`.
 * A whole session of it costs about 12 ms of CPU where starting a Node wrapper cost about 0.4 s.
 *
 * The session directory and the agent's arguments are only ever positional parameters, used as
 * "$@" and quoted expansions: nothing from a file name or a template reaches the script text.
 *
 * Two shells (docs/DAEMON.md, "The agent wrapper"). The outer one is what the runner starts, so on
 * a terminal it is the session leader, which is the only process the kernel sends SIGHUP when the
 * terminal hangs up (a tmux window or server closing). It traps INT and QUIT (they are for the
 * agent) and nothing else: it dies of HUP or TERM, and the death of a session leader makes the
 * kernel send SIGHUP to the terminal's foreground process group, the agent included. Everything
 * else runs in the recorder, a subshell in the same group, which is what `.wrapper` names:
 * 1. Takes the start token `.started` with noclobber (dash and bash create it with O_EXCL); when it
 *    exists the session already ran, or the daemon gave up on it: exit 1, no agent.
 * 2. Writes `.wrapper` (its own pid and start ticks = field 22 of /proc/self/stat read after the
 *    last `)`, boot id, host, tmux pane) to a temp file and renames it into place.
 * 3. Touches `.heartbeat` now and, from a background loop, every heartbeat period; the loop ends
 *    when its parent is no longer the recorder (a kill -9 of it) or when told to. It ignores HUP.
 * 4. Runs the agent in the foreground, in a subshell that writes `.agent` (its own pid and start
 *    ticks, which `exec` keeps) and then execs the agent: the agent has the terminal as stdin and
 *    is in its foreground process group, so Ctrl-C and a hang-up reach it. (A background agent
 *    could be waited for with `wait`, whose traps run at once, but dash starts background jobs
 *    with INT and QUIT ignored for good: Ctrl-C would never reach the agent.) The recorder traps
 *    HUP, INT, QUIT and TERM (a trap, not an ignore: the agent gets the default dispositions), so
 *    it outlives them and records the exit code. POSIX sh runs a trap only once its foreground
 *    child has ended, so a signal sent to the recorder's pid alone is not passed on.
 * 5. Writes `.exit` (the exit code; 128+N when the agent was killed by signal N; its mtime is the
 *    end time) and exits with the agent's code, as the outer shell then does.
 *
 * ENGINE_FAILPOINT=wrapper-after-start / wrapper-before-exit-record makes the recorder kill -9
 * itself at that step, as src/daemon/failpoint.ts does in Node (test/reliability only).
 */
import { SESSION_FILES } from './session-dir.js';
import type { SessionState } from './session-state.js';

/** The names of the files the wrapper writes (session-dir.ts). */
const F = SESSION_FILES;

export const WRAPPER_SCRIPT = [
  'dir=$1 beat=$2',
  'shift 2',
  "IFS=' \t\n'",
  "say() { printf 'engine: %s\\n' \"$1\" >&2; }",
  // Field 22 of a /proc/<pid>/stat line, counted after the last ')' (comm may hold anything).
  'field22() { set -- ${1##*)}; shift 19; ticks=$1; }',
  // One `key=value` line per argument, written whole: temp file, then rename.
  'put() { n=$1; shift; printf \'%s\\n\' "$@" > "$dir/$n.tmp" && mv -f -- "$dir/$n.tmp" "$dir/$n"; }',
  '[ $# -gt 0 ] || { say "no agent command given"; exit 2; }',
  // The outer shell is the terminal's session leader: it dies of HUP and TERM, and its death hangs
  // up the foreground group (the agent, the recorder). It outlives Ctrl-C and Ctrl-\, which are
  // for the agent, and ends with the recorder's code.
  'trap : INT QUIT',
  '(',
  '  set -C',
  `  if ! true 2>/dev/null > "$dir/${F.startToken}"; then`,
  '    set +C',
  `    if [ -e "$dir/${F.startToken}" ]; then`,
  `      say "session $dir already ran (its start token ${F.startToken} exists); a session is never reused"`,
  '    else',
  `      say "cannot create the start token $dir/${F.startToken} (no such session directory?)"`,
  '    fi',
  '    exit 1',
  '  fi',
  '  set +C',
  '  read -r me < /proc/self/stat && field22 "$me" && self=${me%% *} &&',
  '    read -r boot < /proc/sys/kernel/random/boot_id && read -r host < /proc/sys/kernel/hostname &&',
  `    put ${F.wrapper} "pid=$self" "start=$ticks" "boot=$boot" "host=$host" "pane=\${TMUX_PANE-}" ||`,
  `    { say "cannot record the wrapper in $dir/${F.wrapper}; the agent is not started"; exit 1; }`,
  `  true > "$dir/${F.heartbeat}"`,
  '  (',
  '    s=',
  "    trap 'kill $s 2>/dev/null; exit 0' TERM",
  // Beats on after a hang-up for as long as the recorder lives (its agent may ignore HUP too).
  "    trap '' HUP",
  '    while sleep "$beat" & s=$!; wait $s; do',
  '      read -r me < /proc/self/stat || exit 0',
  '      set -- ${me##*)}',
  '      [ "$2" = "$self" ] || exit 0',
  `      true > "$dir/${F.heartbeat}"`,
  '    done',
  '  ) < /dev/null > /dev/null 2>&1 &',
  '  beating=$!',
  '  [ "${ENGINE_FAILPOINT-}" = wrapper-after-start ] && kill -9 $self',
  '  trap : HUP INT QUIT TERM',
  '  (',
  `    read -r me < /proc/self/stat && field22 "$me" && put ${F.agent} "pid=\${me%% *}" "start=$ticks" ||`,
  `      { say "cannot record the agent in $dir/${F.agent}; it is not started"; exit 126; }`,
  '    exec "$@"',
  '  )',
  '  code=$?',
  '  [ "${ENGINE_FAILPOINT-}" = wrapper-before-exit-record ] && kill -9 $self',
  '  kill $beating 2>/dev/null',
  `  put ${F.exit} "code=$code" || say "cannot record the exit code $code in $dir/${F.exit}"`,
  '  exit $code',
  ')',
  'exit $?',
].join('\n');

/** `$0` of the wrapper: what `ps` shows for it. */
export const WRAPPER_NAME = 'engine-agent';

/** The argument vector that runs `agentArgv` under the wrapper for one session. */
export function wrapperArgv(sessionDir: string, heartbeatMs: number, agentArgv: string[]): string[] {
  return [
    '/bin/sh',
    '-c',
    WRAPPER_SCRIPT,
    WRAPPER_NAME,
    sessionDir,
    String(heartbeatMs / 1000),
    ...agentArgv,
  ];
}

/** What the agent finds in its environment about its session (docs/DAEMON.md). */
export function agentEnvironment(state: SessionState, sessionDir: string): Record<string, string> {
  return {
    ENGINE_REQUEST_FILE: state.requestFile,
    ENGINE_SKILL: state.skill,
    ENGINE_NOUN: state.noun,
    ENGINE_SESSION_DIR: sessionDir,
    ENGINE_ROOT: state.root,
    ENGINE_ATTEMPT: String(state.attempt),
    ENGINE_PRIOR_SESSION: state.priorSession ?? '',
  };
}
