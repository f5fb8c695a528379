/**
 * The daemon's settings in one place: each one's `directives/engine.json` key, flag, environment
 * variable, default, range and meaning. `engine run` builds its flags from this table, `engine
 * init` writes engine.json and its description from it, and every value, wherever it comes from,
 * is checked against it: a bad value is an error that says where it came from and what was
 * expected, never silently raised to the minimum or ignored.
 *
 * Precedence: command-line flag > environment variable > engine.json > default. So that a flag's
 * default cannot hide engine.json, the yargs flags carry no defaults; defaults are applied here.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { splitTemplate } from '../dispatch/agent-command.js';
import { AGENT_KINDS, type AgentKind } from '../agents/agent-profile.js';
import { DEFAULT_MONITOR, parseMonitorList } from '../dispatch/monitor-list.js';
import { EngineError, isErrnoException, messageOf } from '../errors.js';
import { DEFAULT_JUDGE_OPTIONS, type JudgeOptions } from '../sessions/judge-session.js';
import { parseNotifyVia, splitNotifyTemplate } from '../notify/notify-event.js';

/** setTimeout's largest delay; a larger one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

interface NumberOption {
  default: number;
  min: number;
  max: number;
  /** Only whole numbers. */
  whole: boolean;
  /** What the number counts, for the error message. */
  unit: string;
  describe: string;
}

const milliseconds = (value: number, min: number, describe: string): NumberOption => ({
  default: value,
  min,
  max: MAX_TIMER_MS,
  whole: true,
  unit: 'milliseconds',
  describe,
});

export const NUMBER_OPTIONS = {
  'debounce-ms': milliseconds(3000, 0, 'Quiet time before a changed file is read'),
  'rescan-interval-ms': milliseconds(
    60_000,
    100,
    'Reconcile pass period (and of the directives/TAGS.md check)',
  ),
  'reap-interval-ms': milliseconds(30_000, 100, 'Dead-claim check period'),
  'claim-grace-ms': milliseconds(
    DEFAULT_JUDGE_OPTIONS.claimGraceMs,
    0,
    'Time a claim may lack a session record',
  ),
  'stale-after': {
    default: DEFAULT_JUDGE_OPTIONS.staleAfterMs / 60_000,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    whole: false,
    unit: 'minutes',
    describe: "Minutes without heartbeat before another host's claim is dead",
  },
  'close-after-done': {
    default: 5,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    whole: false,
    unit: 'minutes',
    describe:
      'Minutes an interactive Claude Code agent stays open after its item shows #done-X, then it is closed: asked to exit at its prompt, signalled otherwise (0: never closed; fractions allowed)',
  },
  'max-agents': {
    default: 4,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    whole: true,
    unit: 'agents',
    describe: 'Running agents at most (0: no cap)',
  },
  'heartbeat-ms': milliseconds(15_000, 100, 'How often the agent wrapper touches its .heartbeat'),
  'poll-ms': milliseconds(
    5000,
    50,
    'How often a running claim is checked when none of its files changed (changes are seen at once)',
  ),
  retries: {
    default: 0,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    whole: true,
    unit: 'retries',
    describe:
      'Agent failures of an item sent back to #delegated-X (with a growing backoff) before one goes to #needs-X',
  },
  'retry-backoff-ms': milliseconds(
    60_000,
    0,
    'Wait before the first retry of a failed agent or launch; each next one doubles it',
  ),
  'limit-backoff': {
    default: 15,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    whole: false,
    unit: 'minutes',
    describe: 'Minutes the queue pauses after a usage limit whose agent gave no reset time',
  },
  aging: {
    default: 0,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    whole: false,
    unit: 'minutes',
    describe:
      'Minutes an item may wait ready before it orders one priority band up (#P2 as #P1, #P1 as #P0), never more (0: off)',
  },
} satisfies Record<string, NumberOption>;

export type NumberOptionName = keyof typeof NUMBER_OPTIONS;

/** `value` when it is in range, else an error naming the flag, the range and what came. */
export function checkNumberOption(name: NumberOptionName, value: unknown): number {
  const expected = numberExpected(name, value);
  if (expected !== null)
    throw new EngineError(`--${name} must be ${expected}, got '${String(value)}'`);
  return value as number;
}

/** What a value of the option must be, when `value` is not that; null when it is. */
function numberExpected(name: NumberOptionName, value: unknown): string | null {
  const option: NumberOption = NUMBER_OPTIONS[name];
  const n = typeof value === 'number' ? value : NaN;
  if (
    Number.isFinite(n) &&
    n >= option.min &&
    n <= option.max &&
    (!option.whole || Number.isInteger(n))
  )
    return null;
  const kind = option.whole ? 'a whole number' : 'a number';
  const upTo = option.max === MAX_TIMER_MS ? ` to ${MAX_TIMER_MS}` : ' up';
  return `${kind} of ${option.unit} from ${option.min}${upTo}`;
}

export const RUNNERS = ['tmux', 'pty'] as const;
export type RunnerKind = (typeof RUNNERS)[number];

/** Every daemon setting, by its `directives/engine.json` key. */
export interface DaemonSettings {
  monitorTags: string;
  agent: AgentKind;
  /** A custom agent's command template; null: none. */
  agentCommand: string | null;
  /** Claude Code's program for the claude profiles; null: `claude` on PATH. */
  claudeBin: string | null;
  runner: RunnerKind;
  tmuxSocket: string | null;
  tmuxSession: string;
  maxAgents: number;
  debounceMs: number;
  rescanIntervalMs: number;
  reapIntervalMs: number;
  claimGraceMs: number;
  /** Minutes. */
  staleAfter: number;
  /** Minutes; 0: never. */
  closeAfterDone: number;
  heartbeatMs: number;
  pollMs: number;
  retries: number;
  retryBackoffMs: number;
  /** Minutes. */
  limitBackoff: number;
  /** Minutes; 0: off (dispatch/work-order agingOf). */
  aging: number;
  /** Each claim in its own git worktree (src/worktrees/). */
  worktree: boolean;
  /** The notification command template (--on-event); null: none. */
  notify: string | null;
  /** The built-in notification channels, a comma list, or `none`. */
  notifyVia: string;
}
export type SettingName = keyof DaemonSettings;

/** Why a value is refused: it is not what was `expected`, or the `reason` says why not. */
type Problem = { expected: string } | { reason: string } | null;

export interface Setting<T> {
  /** The `engine run` flag, without `--`. */
  flag: string;
  /** The environment variable that overrides engine.json, where there is one. */
  env?: string;
  default: T;
  describe: string;
  /** What a value must be, for docs. */
  expected: string;
  problem(value: unknown): Problem;
}

function numberSetting(name: NumberOptionName): Setting<number> {
  const option: NumberOption = NUMBER_OPTIONS[name];
  return {
    flag: name,
    default: option.default,
    describe: option.describe,
    expected: numberExpected(name, NaN) as string,
    problem: (value) => {
      const expected = numberExpected(name, value);
      return expected === null ? null : { expected };
    },
  };
}

function choiceSetting<T extends string>(
  flag: string,
  choices: readonly T[],
  describe: string,
): Setting<T> {
  const expected = `one of ${choices.map((c) => `'${c}'`).join(', ')}`;
  return {
    flag,
    default: choices[0] as T,
    describe,
    expected,
    problem: (value) =>
      typeof value === 'string' && (choices as readonly string[]).includes(value)
        ? null
        : { expected },
  };
}

/** A non-empty string that `valid` accepts (it throws the reason when not). */
function textProblem(
  expected: string,
  valid: (value: string) => void = () => undefined,
): (value: unknown) => Problem {
  return (value) => {
    if (typeof value !== 'string' || value === '') return { expected };
    try {
      valid(value);
      return null;
    } catch (error) {
      return { reason: messageOf(error) };
    }
  };
}

const MONITOR_EXPECTED = "a comma list of #delegated-... tags or globs, such as '#delegated-*'";

/** Every daemon setting, in the order the docs and engine.json list them. */
export const SETTINGS: { [K in SettingName]: Setting<DaemonSettings[K]> } = {
  monitorTags: {
    flag: 'monitor-tags',
    default: DEFAULT_MONITOR.join(','),
    describe: 'Tags or globs to dispatch; used when --monitor-tags is given without a list',
    expected: MONITOR_EXPECTED,
    problem: textProblem(MONITOR_EXPECTED, (value) => void parseMonitorList(value)),
  },
  agent: choiceSetting(
    'agent',
    AGENT_KINDS,
    'Agent profile: claude (interactive Claude Code), claude-print (claude -p, unattended), custom (the agent command; an agent command given more strongly than this setting makes the profile custom)',
  ),
  agentCommand: {
    flag: 'agent-cmd',
    env: 'ENGINE_AGENT_CMD',
    default: null,
    describe:
      'A custom agent: its command template ({skill} {noun} {file} {session} {tag} {agent_session} {prior_agent_session}); null for none',
    expected: 'a command template, or null',
    problem: (value) =>
      value === null
        ? null
        : textProblem('a command template, or null', (v) => void splitTemplate(v))(value),
  },
  claudeBin: {
    flag: 'claude-bin',
    env: 'ENGINE_CLAUDE_BIN',
    default: null,
    describe: "Claude Code's program for the claude profiles; null for claude on PATH",
    expected: 'a program name or path, or null',
    problem: (value) =>
      value === null ? null : textProblem('a program name or path, or null')(value),
  },
  runner: choiceSetting(
    'runner',
    RUNNERS,
    'Where agents run: tmux windows, or node-pty in the daemon',
  ),
  tmuxSocket: {
    flag: 'tmux-socket',
    env: 'ENGINE_TMUX_SOCKET',
    default: null,
    describe: 'tmux server name (tmux -L NAME), or null for the default server',
    expected: 'a tmux server name, or null',
    problem: (value) => (value === null ? null : textProblem('a tmux server name, or null')(value)),
  },
  tmuxSession: {
    flag: 'tmux-session',
    default: 'dispatch',
    describe: 'tmux session holding the agent windows',
    expected: 'a tmux session name',
    problem: textProblem('a tmux session name'),
  },
  maxAgents: numberSetting('max-agents'),
  debounceMs: numberSetting('debounce-ms'),
  rescanIntervalMs: numberSetting('rescan-interval-ms'),
  reapIntervalMs: numberSetting('reap-interval-ms'),
  claimGraceMs: numberSetting('claim-grace-ms'),
  staleAfter: numberSetting('stale-after'),
  closeAfterDone: numberSetting('close-after-done'),
  heartbeatMs: numberSetting('heartbeat-ms'),
  pollMs: numberSetting('poll-ms'),
  retries: numberSetting('retries'),
  retryBackoffMs: numberSetting('retry-backoff-ms'),
  limitBackoff: numberSetting('limit-backoff'),
  aging: numberSetting('aging'),
  worktree: {
    flag: 'worktree',
    default: false,
    describe:
      'Run each claim in its own git worktree on the branch engine/<noun>/<slug>, made from HEAD (the root must be in a git repository)',
    expected: 'true or false',
    problem: (value) => (typeof value === 'boolean' ? null : { expected: 'true or false' }),
  },
  notify: {
    flag: 'on-event',
    env: 'ENGINE_ON_EVENT',
    default: null,
    describe:
      'A command run on done, requeued, gave-up, waiting-for-input, limit-paused and limit-lifted, as an argument vector, never through a shell ({event} {file} {noun} {session} {reason} {until} {time}); null for none',
    expected: 'a command template, or null',
    problem: (value) =>
      value === null
        ? null
        : textProblem('a command template, or null', (v) => void splitNotifyTemplate(v))(value),
  },
  notifyVia: {
    flag: 'notify-via',
    env: 'ENGINE_NOTIFY_VIA',
    default: 'desktop,tmux',
    describe:
      "Built-in notifications of the same events: desktop (notify-send, where it is on PATH), tmux (a message to the clients attached to the agents' tmux server); none for neither",
    expected: "a comma list of desktop, tmux, or 'none'",
    problem: textProblem(
      "a comma list of desktop, tmux, or 'none'",
      (value) => void parseNotifyVia(value),
    ),
  },
};

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export type SettingSource = 'flag' | 'env' | 'engine.json' | 'default';

/** engine.json's key for a note to its reader; its value is not read. */
export const COMMENT_KEY = '$comment';

/** Where the settings file is, relative to the project root. */
export const ENGINE_JSON = 'directives/engine.json';

/** Each setting at its default. */
export function defaultSettings(): DaemonSettings {
  return Object.fromEntries(
    SETTING_NAMES.map((name) => [name, SETTINGS[name].default]),
  ) as unknown as DaemonSettings;
}

/** The yargs definition of a setting's flag: no default, so that engine.json is not hidden. */
export function settingFlag(name: SettingName): { describe: string } {
  const setting: Setting<unknown> = SETTINGS[name];
  const env = setting.env ? `; env ${setting.env}` : '';
  return {
    describe: `${setting.describe} (default ${String(setting.default)}${env}; engine.json "${name}")`,
  };
}

/** The yargs definition of a numeric option's flag, which says its minimum. */
export function numberFlag(name: NumberOptionName): { type: 'number'; describe: string } {
  const option: NumberOption = NUMBER_OPTIONS[name];
  const key = SETTING_NAMES.find((k) => SETTINGS[k].flag === name) as SettingName;
  const range = option.min === 0 ? '' : `; at least ${option.min}`;
  return {
    type: 'number',
    describe: `${option.describe}${range} (default ${option.default}; engine.json "${key}")`,
  };
}

/**
 * The settings in `text`, the contents of `file` (an engine.json): every key known and every
 * value valid, or an error naming the file, the key and what was expected.
 */
export function parseEngineJson(text: string, file: string): Partial<DaemonSettings> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new EngineError(`${file} is not valid JSON: ${messageOf(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new EngineError(
      `${file} must hold a JSON object of settings, got ${JSON.stringify(parsed)}`,
    );
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key === COMMENT_KEY) continue;
    if (!Object.hasOwn(SETTINGS, key)) {
      throw new EngineError(
        `${file}: unknown setting "${key}"; expected one of ${SETTING_NAMES.join(', ')} (or "${COMMENT_KEY}")`,
      );
    }
    settings[key] = checked(key as SettingName, value, `${file}: "${key}"`, JSON.stringify);
  }
  return settings as Partial<DaemonSettings>;
}

/** `value` when the setting accepts it, else an error naming `label`, the expected and what came. */
function checked(
  name: SettingName,
  value: unknown,
  label: string,
  show: (value: unknown) => string,
): unknown {
  const problem = (SETTINGS[name] as Setting<unknown>).problem(value);
  if (problem === null) return value;
  throw new EngineError(
    'reason' in problem
      ? `${label}: ${problem.reason}`
      : `${label} must be ${problem.expected}, got ${show(value)}`,
  );
}

/** `<root>/directives/engine.json`'s settings; none when there is no such file. */
export async function readEngineJson(root: string): Promise<Partial<DaemonSettings>> {
  const file = join(root, ENGINE_JSON);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return {};
    throw new EngineError(`cannot read ${file}: ${messageOf(error)}`);
  }
  return parseEngineJson(text, file);
}

export interface SettingsSources {
  /** Flag values by setting name; undefined (or an empty string) where the flag was not given. */
  flags: Partial<Record<SettingName, unknown>>;
  env: NodeJS.ProcessEnv;
  /** engine.json's settings, already checked (readEngineJson). */
  file: Partial<DaemonSettings>;
}

/** Each setting from the first source that has it: flag, environment, engine.json, default. */
export function resolveSettings(sources: SettingsSources): {
  settings: DaemonSettings;
  from: Record<SettingName, SettingSource>;
} {
  const settings: Record<string, unknown> = {};
  const from: Record<string, SettingSource> = {};
  for (const name of SETTING_NAMES) {
    const setting: Setting<unknown> = SETTINGS[name];
    const flag = sources.flags[name];
    const env = setting.env === undefined ? undefined : sources.env[setting.env];
    if (flag !== undefined && flag !== '') {
      settings[name] = checked(name, flag, `--${setting.flag}`, (v) => `'${String(v)}'`);
      from[name] = 'flag';
    } else if (env !== undefined && env !== '') {
      settings[name] = checked(name, env, setting.env as string, (v) => `'${String(v)}'`);
      from[name] = 'env';
    } else if (Object.hasOwn(sources.file, name)) {
      settings[name] = sources.file[name];
      from[name] = 'engine.json';
    } else {
      settings[name] = setting.default;
      from[name] = 'default';
    }
  }
  return {
    settings: settings as unknown as DaemonSettings,
    from: from as Record<SettingName, SettingSource>,
  };
}

/**
 * The settings of the project at `root`, as the daemon reads them: each from `flags`, the
 * environment, `<root>/directives/engine.json`, else its default. `engine status`, `attach` and
 * `logs` read them here too (with no flags), so they judge claims as the daemon does.
 */
export async function loadSettings(
  root: string,
  flags: SettingsSources['flags'],
  env: NodeJS.ProcessEnv,
): Promise<ReturnType<typeof resolveSettings>> {
  return resolveSettings({ flags, env, file: await readEngineJson(root) });
}

/** How claims are judged under these settings (sessions/judge-session.ts). */
export function judgeOptionsOf(settings: DaemonSettings): JudgeOptions {
  return { claimGraceMs: settings.claimGraceMs, staleAfterMs: settings.staleAfter * 60_000 };
}

/** How the daemon of the project at `root` judges claims, unless its flags say otherwise. */
export async function projectJudgeOptions(
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<JudgeOptions> {
  return judgeOptionsOf((await loadSettings(root, {}, env)).settings);
}
