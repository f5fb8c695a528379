/**
 * The daemon's numeric options in one place: each one's default, its range and what it means.
 * `engine run` builds its flags from this table, and every value is checked against it: a value
 * out of range is an error that says what was expected, never silently raised to the minimum.
 */
import { EngineError } from '../errors.js';
import { DEFAULT_JUDGE_OPTIONS } from '../sessions/judge-session.js';

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
} satisfies Record<string, NumberOption>;

export type NumberOptionName = keyof typeof NUMBER_OPTIONS;

/** The yargs definition of a numeric option. */
export function numberFlag(name: NumberOptionName): {
  type: 'number';
  default: number;
  describe: string;
} {
  const option: NumberOption = NUMBER_OPTIONS[name];
  const range = option.min === 0 ? '' : `; at least ${option.min}`;
  return { type: 'number', default: option.default, describe: `${option.describe}${range}` };
}

/** `value` when it is in range, else an error naming the flag, the range and what came. */
export function checkNumberOption(name: NumberOptionName, value: unknown): number {
  const option: NumberOption = NUMBER_OPTIONS[name];
  const n = typeof value === 'number' ? value : NaN;
  if (
    !Number.isFinite(n) ||
    n < option.min ||
    n > option.max ||
    (option.whole && !Number.isInteger(n))
  ) {
    const kind = option.whole ? 'a whole number' : 'a number';
    const upTo = option.max === MAX_TIMER_MS ? ` to ${MAX_TIMER_MS}` : ' up';
    throw new EngineError(
      `--${name} must be ${kind} of ${option.unit} from ${option.min}${upTo}, got '${String(value)}'`,
    );
  }
  return n;
}
