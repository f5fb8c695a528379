/**
 * The settings of `engine run`, one row each: its name (the field the code reads), flag,
 * environment variable, `directives/engine.json` key, the unit a person types it in, default,
 * range and meaning. `engine run` builds its flags from this table, `engine init` writes
 * engine.json and its description from it, and every value, wherever it comes from, is checked
 * and converted by its row: a bad value is an error that says where it came from and what was
 * expected, never silently raised to the minimum or ignored.
 *
 * One unit per quantity: every duration is held in milliseconds. Three are typed in minutes
 * (`--stale-after`, `--close-after-done`, `--limit-backoff`, and their keys), as they always were:
 * their rows convert at the edge, so `staleAfterMs` is the one name and unit inside.
 */
import { AGENT_KINDS, type AgentKind } from '../agents/agent-profile.js';
import { splitTemplate } from '../dispatch/agent-command.js';
import { DEFAULT_MONITOR, parseMonitorList } from '../dispatch/monitor-list.js';
import { messageOf } from '../errors.js';
import { parseNotifyVia, splitNotifyTemplate, type NotifyChannel } from '../notify/notify-event.js';
import { DEFAULT_JUDGE_OPTIONS } from '../sessions/judge-session.js';
import { SESSION_FILES } from '../sessions/session-dir.js';
import { WATCHER_KINDS, type WatcherKind } from '../watch/watch-backend.js';

/** setTimeout's largest delay; a larger one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export const RUNNERS = ['tmux', 'pty'] as const;
export type RunnerKind = (typeof RUNNERS)[number];

export const CLAIMS_KINDS = ['local', 'git'] as const;
export type ClaimsKind = (typeof CLAIMS_KINDS)[number];

/** Every setting as the code reads it: each duration in milliseconds, each list parsed. */
export interface Settings {
  /** Tags or globs, each `#delegated-...`. */
  monitor: string[];
  agent: AgentKind;
  /** A custom agent's command template; null: none. */
  agentCommand: string | null;
  /** Claude Code's program for the claude profiles; null: `claude` on PATH. */
  claudeBin: string | null;
  runner: RunnerKind;
  tmuxSocket: string | null;
  tmuxSession: string;
  /** 0: no cap. */
  maxAgents: number;
  debounceMs: number;
  /** false: reconcile passes only, no file watch. */
  watch: boolean;
  /** The watch backend: node or parcel (one inotify watch per directory) or chokidar (per file). */
  watcher: WatcherKind;
  rescanIntervalMs: number;
  reapIntervalMs: number;
  claimGraceMs: number;
  staleAfterMs: number;
  /** 0: never closed. */
  closeAfterDoneMs: number;
  heartbeatMs: number;
  pollMs: number;
  retries: number;
  retryBackoffMs: number;
  limitBackoffMs: number;
  /** How long an item may wait ready before it orders one band up (dispatch/work-order agingOf); 0: off. */
  agingMs: number;
  /** Each claim in its own git worktree (src/worktrees/). */
  worktree: boolean;
  /** The notification command template (--on-event); null: none. */
  notify: string | null;
  /** The built-in notification channels; none: []. */
  notifyVia: NotifyChannel[];
  /** The file the daemon's log is appended to instead of stderr (relative: to the root); null: stderr. */
  logFile: string | null;
  /** Where claims are kept: the request files (local), or the shared git remote (docs/MULTI-HOST.md). */
  claims: ClaimsKind;
  /** The git remote shared by the hosts (git claims). */
  claimsRemote: string;
  /** The shared branch the request files live on; null: the remote's default branch. */
  claimsBranch: string | null;
  /** How often the shared branch and the claims are fetched (git claims), jittered. */
  claimsFetchMs: number;
  /** How long a claim's lease runs unrenewed before another host may take it over (git claims). */
  claimsLeaseMs: number;
}
export type SettingName = keyof Settings;

/** What a setting's value counts, as a person types it. */
export type Unit =
  | 'milliseconds'
  | 'minutes'
  | 'agents'
  | 'retries'
  | 'boolean'
  | 'choice'
  | 'text'
  | 'tags'
  | 'command';

/** Why a value is refused: it is not what was `expected`, or the `reason` says why not. */
export type Problem = { expected: string } | { reason: string };

export interface Setting<T> {
  /** The `engine run` flag, without `--`. */
  flag: string;
  /** The environment variable, between the flag and engine.json. */
  env: string;
  /** The key in `directives/engine.json`. */
  key: string;
  unit: Unit;
  /** The default as typed (in `unit`), as engine.json holds it. */
  default: unknown;
  describe: string;
  /** What a typed value must be, for messages and docs. */
  expected: string;
  /** A number's range, in `unit`. */
  range?: NumberRange;
  /** How the flag is declared to yargs. */
  flagType: 'number' | 'string' | 'boolean';
  /** Choices the flag takes, where there is a closed list. */
  choices?: readonly string[];
  /** An environment variable's text as typed: a number or boolean parsed, text as it is. */
  fromText(text: string): unknown;
  /** A typed value converted to the one unit inside, or why it is refused. */
  read(value: unknown): { value: T } | Problem;
}

export interface NumberRange {
  min: number;
  max: number;
  /** Only whole numbers. */
  whole: boolean;
}

/** A decimal number as a person types one; NaN for anything else. */
export function numberFromText(text: string): number {
  return /^\s*[-+]?(\d+\.?\d*|\.\d+)\s*$/.test(text) ? Number(text) : NaN;
}

/** What a number in `range` of `unit` is, in words: `a whole number of agents from 0 up`. */
export function expectedNumber(range: NumberRange, unit?: string): string {
  const kind = `${range.whole ? 'a whole number' : 'a number'}${unit === undefined ? '' : ` of ${unit}`}`;
  const upTo = range.max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${range.max}`;
  return `${kind} from ${range.min}${upTo}`;
}

/**
 * A number typed on a command line or in the environment (text), or held in engine.json (a
 * number), when it is in `range`: every number engine reads is checked here.
 */
export function numberIn(value: unknown, range: NumberRange): number | null {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' ? numberFromText(value) : NaN;
  const valid =
    Number.isFinite(n) && n >= range.min && n <= range.max && (!range.whole || Number.isInteger(n));
  return valid ? n : null;
}

function numberSetting(
  names: { flag: string; env: string; key: string },
  unit: 'milliseconds' | 'minutes' | 'agents' | 'retries',
  typedDefault: number,
  range: NumberRange,
  describe: string,
): Setting<number> {
  const expected = expectedNumber(range, unit);
  // Minutes are held as milliseconds, rounded to whole ones (0.1 minutes is 6000 ms).
  const scale = unit === 'minutes' ? 60_000 : 1;
  return {
    ...names,
    unit,
    default: typedDefault,
    describe,
    expected,
    range,
    flagType: 'number',
    fromText: numberFromText,
    read: (value) => {
      // engine.json's "100" is text where a number belongs: refused, as JSON types are.
      const n = typeof value === 'number' ? numberIn(value, range) : null;
      return n === null ? { expected } : { value: Math.round(n * scale) };
    },
  };
}

const milliseconds = (min: number): NumberRange => ({ min, max: MAX_TIMER_MS, whole: true });
const fromZero = (whole: boolean): NumberRange => ({
  min: 0,
  max: Number.MAX_SAFE_INTEGER,
  whole,
});

function choiceSetting<T extends string>(
  names: { flag: string; env: string; key: string },
  choices: readonly T[],
  describe: string,
): Setting<T> {
  const expected = `one of ${choices.map((c) => `'${c}'`).join(', ')}`;
  return {
    ...names,
    unit: 'choice',
    default: choices[0],
    describe,
    expected,
    flagType: 'string',
    choices,
    fromText: (text) => text,
    read: (value) =>
      typeof value === 'string' && (choices as readonly string[]).includes(value)
        ? { value: value as T }
        : { expected },
  };
}

function booleanSetting(
  names: { flag: string; env: string; key: string },
  typedDefault: boolean,
  describe: string,
): Setting<boolean> {
  const expected = 'true or false';
  return {
    ...names,
    unit: 'boolean',
    default: typedDefault,
    describe,
    expected,
    flagType: 'boolean',
    fromText: (text) => (text === 'true' ? true : text === 'false' ? false : text),
    read: (value) => (typeof value === 'boolean' ? { value } : { expected }),
  };
}

/**
 * A text setting: a non-empty string that `parse` accepts (it throws the reason when not), or
 * null where `nullable`.
 */
function textSetting<T>(
  names: { flag: string; env: string; key: string },
  options: {
    unit: 'text' | 'tags' | 'command';
    default: string | null;
    expected: string;
    describe: string;
    parse: (text: string) => T;
  },
): Setting<T> {
  const { parse, ...rest } = options;
  return {
    ...names,
    ...rest,
    flagType: 'string',
    fromText: (text) => text,
    read: (value) => {
      if (value === null && options.default === null) return { value: null as T };
      if (typeof value !== 'string' || value === '') return { expected: options.expected };
      try {
        return { value: parse(value) };
      } catch (error) {
        return { reason: messageOf(error) };
      }
    },
  };
}

const asIs = (text: string): string => text;

/** Every setting, in the order the docs and engine.json list them. */
export const SETTINGS: { [K in SettingName]: Setting<Settings[K]> } = {
  monitor: textSetting(
    { flag: 'monitor-tags', env: 'ENGINE_MONITOR_TAGS', key: 'monitorTags' },
    {
      unit: 'tags',
      default: DEFAULT_MONITOR.join(','),
      expected: "a comma list of #delegated-... tags or globs, such as '#delegated-*'",
      describe:
        'Tags or globs to dispatch; the flag also starts the daemon, and given without a list it takes this setting',
      parse: parseMonitorList,
    },
  ),
  agent: choiceSetting(
    { flag: 'agent', env: 'ENGINE_AGENT', key: 'agent' },
    AGENT_KINDS,
    'Agent profile: claude (interactive Claude Code), claude-print (claude -p, unattended), custom (the agent command; an agent command given more strongly than this setting makes the profile custom)',
  ),
  agentCommand: textSetting(
    { flag: 'agent-cmd', env: 'ENGINE_AGENT_CMD', key: 'agentCommand' },
    {
      unit: 'command',
      default: null,
      expected: 'a command template, or null',
      describe:
        'A custom agent: its command template ({skill} {noun} {file} {session} {tag} {agent_session} {prior_agent_session} {running}); null for none',
      parse: (text) => (splitTemplate(text), text),
    },
  ),
  claudeBin: textSetting(
    { flag: 'claude-bin', env: 'ENGINE_CLAUDE_BIN', key: 'claudeBin' },
    {
      unit: 'text',
      default: null,
      expected: 'a program name or path, or null',
      describe: "Claude Code's program for the claude profiles; null for claude on PATH",
      parse: asIs,
    },
  ),
  runner: choiceSetting(
    { flag: 'runner', env: 'ENGINE_RUNNER', key: 'runner' },
    RUNNERS,
    'Where agents run: tmux windows, or node-pty in the daemon',
  ),
  tmuxSocket: textSetting(
    { flag: 'tmux-socket', env: 'ENGINE_TMUX_SOCKET', key: 'tmuxSocket' },
    {
      unit: 'text',
      default: null,
      expected: 'a tmux server name, or null',
      describe: 'tmux server name (tmux -L NAME), or null for the default server',
      parse: asIs,
    },
  ),
  tmuxSession: textSetting(
    { flag: 'tmux-session', env: 'ENGINE_TMUX_SESSION', key: 'tmuxSession' },
    {
      unit: 'text',
      default: 'dispatch',
      expected: 'a tmux session name',
      describe: 'tmux session holding the agent windows',
      parse: asIs,
    },
  ),
  maxAgents: numberSetting(
    { flag: 'max-agents', env: 'ENGINE_MAX_AGENTS', key: 'maxAgents' },
    'agents',
    4,
    fromZero(true),
    'Running agents at most (0: no cap)',
  ),
  debounceMs: numberSetting(
    { flag: 'debounce-ms', env: 'ENGINE_DEBOUNCE_MS', key: 'debounceMs' },
    'milliseconds',
    3000,
    milliseconds(0),
    'Quiet time before a changed file is read',
  ),
  watch: booleanSetting(
    { flag: 'watch', env: 'ENGINE_WATCH', key: 'watch' },
    true,
    'Watch files for changes; --no-watch (false) relies on reconcile passes only',
  ),
  watcher: choiceSetting(
    { flag: 'watcher', env: 'ENGINE_WATCHER', key: 'watcher' },
    WATCHER_KINDS,
    'File watch backend: node (fs.watch, one inotify watch per directory), parcel (@parcel/watcher, one per directory, a record of every file) or chokidar (one per file; used where parcel cannot load, and by default with --claims git)',
  ),
  rescanIntervalMs: numberSetting(
    { flag: 'rescan-interval-ms', env: 'ENGINE_RESCAN_INTERVAL_MS', key: 'rescanIntervalMs' },
    'milliseconds',
    60_000,
    milliseconds(100),
    'Reconcile pass period (while the watch is healthy a directory pass, every fifth a full one; also the directives/TAGS.md check)',
  ),
  reapIntervalMs: numberSetting(
    { flag: 'reap-interval-ms', env: 'ENGINE_REAP_INTERVAL_MS', key: 'reapIntervalMs' },
    'milliseconds',
    30_000,
    milliseconds(100),
    'Dead-claim check period',
  ),
  claimGraceMs: numberSetting(
    { flag: 'claim-grace-ms', env: 'ENGINE_CLAIM_GRACE_MS', key: 'claimGraceMs' },
    'milliseconds',
    DEFAULT_JUDGE_OPTIONS.claimGraceMs,
    milliseconds(0),
    'Time a claim may lack a session record',
  ),
  staleAfterMs: numberSetting(
    { flag: 'stale-after', env: 'ENGINE_STALE_AFTER', key: 'staleAfter' },
    'minutes',
    DEFAULT_JUDGE_OPTIONS.staleAfterMs / 60_000,
    fromZero(false),
    "Minutes without heartbeat before another host's claim is dead",
  ),
  closeAfterDoneMs: numberSetting(
    { flag: 'close-after-done', env: 'ENGINE_CLOSE_AFTER_DONE', key: 'closeAfterDone' },
    'minutes',
    5,
    fromZero(false),
    'Minutes an interactive Claude Code agent stays open after its item shows #done-X, then it is closed: asked to exit at its prompt, signalled otherwise (0: never closed; fractions allowed)',
  ),
  heartbeatMs: numberSetting(
    { flag: 'heartbeat-ms', env: 'ENGINE_HEARTBEAT_MS', key: 'heartbeatMs' },
    'milliseconds',
    15_000,
    milliseconds(100),
    `How often the agent wrapper touches its ${SESSION_FILES.heartbeat}`,
  ),
  pollMs: numberSetting(
    { flag: 'poll-ms', env: 'ENGINE_POLL_MS', key: 'pollMs' },
    'milliseconds',
    5000,
    milliseconds(50),
    'How often a running claim is checked when none of its files changed (changes are seen at once)',
  ),
  retries: numberSetting(
    { flag: 'retries', env: 'ENGINE_RETRIES', key: 'retries' },
    'retries',
    0,
    fromZero(true),
    'Agent failures of an item sent back to #delegated-X (with a growing backoff) before one goes to #needs-X',
  ),
  retryBackoffMs: numberSetting(
    { flag: 'retry-backoff-ms', env: 'ENGINE_RETRY_BACKOFF_MS', key: 'retryBackoffMs' },
    'milliseconds',
    60_000,
    milliseconds(0),
    'Wait before the first retry of a failed agent or launch; each next one doubles it',
  ),
  limitBackoffMs: numberSetting(
    { flag: 'limit-backoff', env: 'ENGINE_LIMIT_BACKOFF', key: 'limitBackoff' },
    'minutes',
    15,
    fromZero(false),
    'Minutes the queue pauses after a usage limit whose agent gave no reset time',
  ),
  agingMs: numberSetting(
    { flag: 'aging', env: 'ENGINE_AGING', key: 'aging' },
    'minutes',
    0,
    fromZero(false),
    'Minutes an item may wait ready before it orders one priority band up (#P2 as #P1, #P1 as #P0), never more (0: off)',
  ),
  worktree: booleanSetting(
    { flag: 'worktree', env: 'ENGINE_WORKTREE', key: 'worktree' },
    false,
    'Run each claim in its own git worktree on the branch engine/<noun>/<slug>, made from HEAD (the root must be in a git repository)',
  ),
  notify: textSetting(
    { flag: 'on-event', env: 'ENGINE_ON_EVENT', key: 'notify' },
    {
      unit: 'command',
      default: null,
      expected: 'a command template, or null',
      describe:
        'A command run on done, requeued, gave-up, waiting-for-input, limit-paused and limit-lifted, as an argument vector, never through a shell ({event} {file} {noun} {session} {reason} {until} {time}); null for none',
      parse: (text) => (splitNotifyTemplate(text), text),
    },
  ),
  notifyVia: textSetting(
    { flag: 'notify-via', env: 'ENGINE_NOTIFY_VIA', key: 'notifyVia' },
    {
      unit: 'text',
      default: 'desktop,tmux',
      expected: "a comma list of desktop, tmux, or 'none'",
      describe:
        "Built-in notifications of the same events: desktop (notify-send, where it is on PATH), tmux (a message to the clients attached to the agents' tmux server); none for neither",
      parse: parseNotifyVia,
    },
  ),
  logFile: textSetting(
    { flag: 'log-file', env: 'ENGINE_LOG_FILE', key: 'logFile' },
    {
      unit: 'text',
      default: null,
      expected: 'a file path, or null',
      describe:
        "Append the daemon's log to this file instead of stderr (a relative path is taken from the project root); at 10 MB it moves to FILE.1, replacing the older one, and starts anew; null for stderr",
      parse: asIs,
    },
  ),
  claims: choiceSetting(
    { flag: 'claims', env: 'ENGINE_CLAIMS', key: 'claims' },
    CLAIMS_KINDS,
    'Where claims are kept: local (the request files of this tree, one daemon), or git (claim refs on the shared remote, so that daemons on several hosts share one queue: docs/MULTI-HOST.md)',
  ),
  claimsRemote: textSetting(
    { flag: 'claims-remote', env: 'ENGINE_CLAIMS_REMOTE', key: 'claimsRemote' },
    {
      unit: 'text',
      default: 'origin',
      expected: 'the name of a git remote',
      describe: 'With --claims git: the git remote the hosts share',
      parse: asIs,
    },
  ),
  claimsBranch: textSetting(
    { flag: 'claims-branch', env: 'ENGINE_CLAIMS_BRANCH', key: 'claimsBranch' },
    {
      unit: 'text',
      default: null,
      expected: 'a branch name, or null',
      describe:
        "With --claims git: the shared branch the request files live on; null for the remote's default branch",
      parse: asIs,
    },
  ),
  claimsFetchMs: numberSetting(
    { flag: 'claims-fetch-ms', env: 'ENGINE_CLAIMS_FETCH_MS', key: 'claimsFetchMs' },
    'milliseconds',
    5000,
    milliseconds(100),
    'With --claims git: how often the shared branch and the claims are fetched (each wait jittered by a fifth)',
  ),
  claimsLeaseMs: numberSetting(
    { flag: 'claims-lease-ms', env: 'ENGINE_CLAIMS_LEASE_MS', key: 'claimsLeaseMs' },
    'milliseconds',
    60_000,
    milliseconds(1000),
    "With --claims git: a claim's lease; its holder renews it every third of it, and another host takes it over only after it ran out unrenewed",
  ),
};

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** engine.json's key for a note to its reader; its value is not read. */
export const COMMENT_KEY = '$comment';

/** Where the settings file is, relative to the project root. */
export const ENGINE_JSON = 'directives/engine.json';

/** The setting a row's value converts to, or the problem (a default never has one). */
function valueOf<K extends SettingName>(name: K, typed: unknown): Settings[K] {
  const read = (SETTINGS[name] as Setting<Settings[K]>).read(typed);
  if (!('value' in read)) throw new Error(`the default of ${name} is refused by its own row`);
  return read.value;
}

/** Each setting at its default, as the code reads it. */
export function defaultSettings(): Settings {
  return Object.fromEntries(
    SETTING_NAMES.map((name) => [name, valueOf(name, SETTINGS[name].default)]),
  ) as unknown as Settings;
}

/** Each setting's default as typed, by engine.json key: what `engine init` writes. */
export function typedDefaults(): Record<string, unknown> {
  return Object.fromEntries(
    SETTING_NAMES.map((name) => [SETTINGS[name].key, SETTINGS[name].default]),
  );
}

/** The yargs definition of a setting's flag: no default, so that engine.json is not hidden. */
export function settingFlag(name: SettingName): {
  type: 'string' | 'boolean';
  choices?: readonly string[];
  describe: string;
} {
  const setting: Setting<unknown> = SETTINGS[name];
  const min = setting.range?.min ?? 0;
  const least = min > 0 ? `; at least ${min}` : '';
  return {
    // A number reaches its row as typed, so that a refusal can echo it (yargs would make NaN).
    type: setting.flagType === 'number' ? 'string' : setting.flagType,
    ...(setting.choices ? { choices: setting.choices } : {}),
    describe: `${setting.describe}${least} (default ${String(setting.default)}; env ${setting.env}; engine.json "${setting.key}")`,
  };
}
