/**
 * The tag vocabulary: what a tag name is, the lifecycle states, and tag patterns (`#delegated-*`).
 * See docs/TAGS.md for the grammar.
 */
import { EngineError } from '../errors.js';

/** Lifecycle states, in the order an item moves through them. */
export const LIFECYCLE_STATES = [
  'needs',
  'delegated',
  'next',
  'claimed',
  'done',
  'active',
] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/**
 * The lifecycle's transitions, and who makes each (docs/ARCHITECTURE.md). Every edit of a
 * lifecycle tag looks its states up here.
 */
export const LIFECYCLE_TRANSITIONS = {
  /** A human approves the work: the daemon may dispatch it. */
  approve: { from: 'needs', to: 'delegated' },
  /** A human queues it for the next skill instead. */
  pick: { from: 'needs', to: 'next' },
  /** The daemon claims it, before anything else happens for it. */
  claim: { from: 'delegated', to: 'claimed' },
  /** The daemon puts its claim back after an older copy was saved over it. */
  restore: { from: 'delegated', to: 'claimed' },
  /** The agent marks its work done. */
  finish: { from: 'claimed', to: 'done' },
  /** The daemon hands the item of a dead agent back to a human. */
  requeue: { from: 'claimed', to: 'needs' },
  /** A human cancels a claim (`engine cancel`): its agent is ended, the item comes back to them. */
  cancel: { from: 'claimed', to: 'needs' },
  /** A human retries an item now (`engine retry`): an approval that waits for no backoff. */
  retry: { from: 'needs', to: 'delegated' },
} as const satisfies Record<string, { from: LifecycleState; to: LifecycleState }>;

export type LifecycleTransition = keyof typeof LIFECYCLE_TRANSITIONS;

/** The tags a transition swaps for one noun: `#delegated-fix` → `#claimed-fix`, say. */
export function transitionTags(
  transition: LifecycleTransition,
  noun: string,
): { from: string; to: string } {
  const { from, to } = LIFECYCLE_TRANSITIONS[transition];
  return { from: lifecycleTag(from, noun), to: lifecycleTag(to, noun) };
}

const NAME_SOURCE = '[A-Za-z0-9][A-Za-z0-9-]*';
const TAG = new RegExp(`^#${NAME_SOURCE}$`);
const LIFECYCLE = new RegExp(`^#(${LIFECYCLE_STATES.join('|')})-([a-z0-9][a-z0-9-]*)$`);

/**
 * Characters that continue a word: a run of name characters followed by one of these is not a
 * tag at all (`#needs_fix`, `#needs-fixé`). Combining marks count, so a decomposed `é`
 * (`e` + U+0301) continues the word like a precomposed one.
 */
export const NAME_CONTINUES = /[\p{L}\p{M}\p{N}_]/u;
/** A `#` preceded by one of these is not a tag (URLs, `foo#bar`, entities, `##`). */
export const HASH_ATTACHED = /[\p{L}\p{M}\p{N}_/&#-]/u;
/** Finds candidate tags in prose; boundaries are checked by the scanner. */
export const TAG_IN_TEXT = /#([A-Za-z0-9][A-Za-z0-9-]*)/g;

export function isTag(value: string): boolean {
  return TAG.test(value);
}

/** Validates a tag given on the command line; `#` is required. */
export function parseTag(input: string): string {
  if (!isTag(input)) {
    throw new EngineError(
      `Invalid tag '${input}': expected '#' and a name of letters, digits and hyphens (e.g. '#needs-implementation')`,
    );
  }
  return input;
}

/** Splits `#a,#b` into validated tags. */
export function parseTagList(input: string): string[] {
  const tags = input.split(',').map((part) => parseTag(part.trim()));
  return [...new Set(tags)];
}

export interface Lifecycle {
  state: LifecycleState;
  noun: string;
}

export function lifecycleOf(tag: string): Lifecycle | null {
  const match = LIFECYCLE.exec(tag);
  if (!match) return null;
  return { state: match[1] as LifecycleState, noun: match[2] as string };
}

export function lifecycleTag(state: LifecycleState, noun: string): string {
  return `#${state}-${noun}`;
}

/** A noun that holds more than one lifecycle state: its tags, in the order given. */
export interface TwoStates {
  noun: string;
  tags: string[];
}

/**
 * The nouns of `tags` (a file's Tags line and front matter) that hold two lifecycle states or
 * more, such as `#done-fix #delegated-fix`. One noun has one state: such a file says two things
 * about one item, and nothing may act on it until a human picks one (docs/TAGS.md).
 */
export function nounsWithTwoStates(tags: string[]): TwoStates[] {
  const byNoun = new Map<string, string[]>();
  for (const tag of new Set(tags)) {
    const life = lifecycleOf(tag);
    if (life) byNoun.set(life.noun, [...(byNoun.get(life.noun) ?? []), tag]);
  }
  return [...byNoun]
    .filter(([, states]) => states.length > 1)
    .map(([noun, states]) => ({ noun, tags: states }));
}

/** Weight tags: priority (`#P0`..`#P2`) and effort (`#S #M #L`). */
export const PRIORITY_TAGS = ['#P0', '#P1', '#P2'] as const;
export const EFFORT_TAGS = ['#S', '#M', '#L'] as const;

/**
 * A tag or a glob over tags: `*` matches `[a-z0-9-]*`.
 * `literal` is the longest run without `*`, used as a cheap byte prefilter.
 */
export interface TagPattern {
  source: string;
  matches(tag: string): boolean;
  /** Bytes every matching file must contain (the name without `#`, up to the first `*`). */
  prefilter: string;
}

export function parseTagPattern(input: string): TagPattern {
  if (!/^#[A-Za-z0-9*][A-Za-z0-9*-]*$/.test(input)) {
    throw new EngineError(
      `Invalid tag pattern '${input}': expected a tag such as '#needs-fix' or a glob such as '#delegated-*'`,
    );
  }
  if (!input.includes('*')) {
    return { source: input, matches: (tag) => tag === input, prefilter: input.slice(1) };
  }
  const body = input
    .slice(1)
    .split('*')
    .map((part) => part.replace(/-/g, '\\-'))
    .join('[a-z0-9-]*');
  const regex = new RegExp(`^#${body}$`);
  const literals = input.slice(1).split('*');
  const prefilter = literals.reduce((a, b) => (b.length > a.length ? b : a), '');
  return { source: input, matches: (tag) => regex.test(tag), prefilter };
}
