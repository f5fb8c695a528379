/**
 * The work a request file carries, from its tags alone: the `#delegated-X` items on its Tags line
 * or in front matter (with their §TAG_DISPATCH row), and its claims. Pure; the daemon, `engine
 * status` and `--dry-run` read a file's work through this one function.
 */
import type { DispatchRoute } from './dispatch-table.js';
import { weightOf, type OrderKey } from './work-order.js';
import type { TagOccurrence } from '../tags/scan-tags.js';
import {
  lifecycleOf,
  nounsWithTwoStates,
  transitionTags,
  type TagPattern,
  type TwoStates,
} from '../tags/tag-name.js';

/** A `#delegated-X` ready to be dispatched: it has a dispatchable row. */
export interface WorkItem extends OrderKey {
  file: string;
  noun: string;
  skill: string;
}

/** A `#delegated-X` with the row the table has for it (null: none). */
export interface DelegatedTag {
  noun: string;
  route: DispatchRoute | null;
}

export interface FileWork {
  /** The `#delegated-X` tags the patterns select, in the order they are written, each once. */
  delegated: DelegatedTag[];
  /** Those with a dispatchable row, as queue items. */
  items: WorkItem[];
  /** Claimed nouns, and whether `#done-X` stands beside the claim. */
  claims: Array<{ noun: string; done: boolean }>;
  /** `#P0`..`#P2` of the file: 0, 1, or 2 for none. */
  weight: number;
  /**
   * Nouns with two lifecycle states or more (`#done-fix #delegated-fix`, written by hand): the
   * file says two things about one item, so none of its work is dispatched (no `delegated`, no
   * `items`) until a human keeps one state. Its claims stay known, to be followed or requeued.
   */
  twoStates: TwoStates[];
}

/** Why a file with two states of one noun is not dispatched, for the daemon's log and status. */
export function twoStatesProblem({ tags }: TwoStates): string {
  return `it holds ${tags.join(' ')} on its Tags line or front matter, two lifecycle states of one noun (one noun has one state); not dispatched until the one that is not true is removed (engine tag remove <file> <tag>)`;
}

export function workItemsOf(
  file: string,
  occurrences: TagOccurrence[],
  route: (noun: string) => DispatchRoute | null,
  { patterns, readyAt }: { patterns?: TagPattern[]; readyAt: number },
): FileWork {
  const tags = [...new Set(occurrences.filter((o) => o.place !== 'prose').map((o) => o.tag))];
  const weight = weightOf(tags);
  const twoStates = nounsWithTwoStates(tags);
  const work: FileWork = { delegated: [], items: [], claims: [], weight, twoStates };
  for (const tag of tags) {
    const life = lifecycleOf(tag);
    if (life?.state === 'claimed') {
      work.claims.push({
        noun: life.noun,
        done: tags.includes(transitionTags('finish', life.noun).to),
      });
    }
    if (life?.state !== 'delegated' || twoStates.length > 0) continue;
    if (patterns && !patterns.some((p) => p.matches(tag))) continue;
    const row = route(life.noun);
    work.delegated.push({ noun: life.noun, route: row });
    if (!row?.dispatchable) continue;
    work.items.push({
      file,
      noun: life.noun,
      skill: row.skill,
      weight,
      tablePriority: row.priority,
      readyAt,
    });
  }
  return work;
}

/** The claim a file carries, which its other items wait for: one claim per request file at a time. */
export function claimOf(work: FileWork): string | null {
  const claim = work.claims[0];
  return claim ? transitionTags('claim', claim.noun).to : null;
}
