/**
 * Whether an item's dependencies hold it, and by what (docs/DAEMON.md, "Dependencies"). Pure: a
 * function of the dependency graph its IO (dependencies/resolve-dependencies) read from the
 * files. An item is free when every file its `**Depends On**:` entries name is done; anything
 * else holds it, named per dependency, so `engine status` and the daemon's log can say which.
 */
import type { FailureKind, RecoveryRecord } from '../tags/recovery-entries.js';
import { lifecycleOf } from '../tags/tag-name.js';

/** One entry of a Depends On line, resolved against the project root. */
export type ResolvedEntry =
  /** The files it names, relative to the root (`/`-separated); none: it names no file. */
  | { pattern: string; kind: 'files'; files: string[] }
  /** A `..` escape, an absolute path or a symlink that leads outside the root. */
  | { pattern: string; kind: 'outside-root' };

/** What the judgement reads of one file a dependency names. */
export type DependencyFile =
  | {
      kind: 'request';
      /** The tags of its Tags line and front matter (where the state lives). */
      tags: string[];
      lastRecovery: RecoveryRecord | undefined;
      /** Its own entries, resolved; followed only while it is not done (cycles). */
      dependsOn: ResolvedEntry[];
    }
  | { kind: 'unreadable'; reason: string };

export interface DependencyGraph {
  /** The item's file, relative to the root. */
  file: string;
  /** Its entries, resolved. */
  dependsOn: ResolvedEntry[];
  /** The files read, by path relative to the root: those named by the item, then theirs. */
  files: ReadonlyMap<string, DependencyFile>;
}

/** Why one dependency holds the item. `states`: the dependency's lifecycle tags not done. */
export type Blocker =
  /** Not done yet: `#delegated-`, `#next-`, `#claimed-` or `#active-` (it may be held itself). */
  | { kind: 'pending'; pattern: string; file: string; states: string[] }
  /** Back at `#needs-X` with no Recovery entry: it waits for a human's approval. */
  | { kind: 'needs'; pattern: string; file: string; states: string[] }
  /** Back at `#needs-X` after a failure (its last Recovery entry): given up until retried. */
  | { kind: 'failed'; pattern: string; file: string; states: string[]; failure: FailureKind }
  /** No lifecycle tag on its Tags line or front matter: it is never done. */
  | { kind: 'no-state'; pattern: string; file: string }
  | { kind: 'unreadable'; pattern: string; file: string; reason: string }
  /** The entry names no file (a path that does not exist, a glob that matches none). */
  | { kind: 'missing'; pattern: string }
  | { kind: 'outside-root'; pattern: string }
  /** The dependency waits, through its own, for the item: `cycle` starts at the item's file. */
  | { kind: 'cycle'; pattern: string; cycle: string[] };

/** What a dependency file's state means for the items after it. */
export type DependencyState = 'done' | 'pending' | 'needs' | 'failed' | 'no-state';

/**
 * Done when every lifecycle noun of the file is `#done-X`: a file that still carries work
 * (`#done-research #delegated-implementation`) is not finished, and what comes after it waits.
 */
export function dependencyState(file: Extract<DependencyFile, { kind: 'request' }>): {
  state: DependencyState;
  states: string[];
} {
  const lifecycle = file.tags.flatMap((tag) => {
    const life = lifecycleOf(tag);
    return life ? [{ tag, state: life.state }] : [];
  });
  if (lifecycle.length === 0) return { state: 'no-state', states: [] };
  const states = lifecycle.filter((l) => l.state !== 'done').map((l) => l.tag);
  if (states.length === 0) return { state: 'done', states };
  if (!lifecycle.some((l) => l.state === 'needs')) return { state: 'pending', states };
  return { state: file.lastRecovery ? 'failed' : 'needs', states };
}

/** The blockers of the item, one or more per dependency that is not done; none: it is free. */
export function judgeDependencies(graph: DependencyGraph): Blocker[] {
  const blockers: Blocker[] = [];
  for (const entry of graph.dependsOn) {
    const { pattern } = entry;
    if (entry.kind === 'outside-root') blockers.push({ kind: 'outside-root', pattern });
    else if (entry.files.length === 0) blockers.push({ kind: 'missing', pattern });
    else for (const file of entry.files) blockers.push(...fileBlockers(graph, pattern, file));
  }
  return blockers;
}

function fileBlockers(graph: DependencyGraph, pattern: string, file: string): Blocker[] {
  const cycle = file === graph.file ? [file] : cycleThrough(graph, file);
  if (cycle) return [{ kind: 'cycle', pattern, cycle }];
  const node = graph.files.get(file) ?? { kind: 'unreadable', reason: 'it was not read' };
  if (node.kind === 'unreadable')
    return [{ kind: 'unreadable', pattern, file, reason: node.reason }];
  const { state, states } = dependencyState(node);
  switch (state) {
    case 'done':
      return [];
    case 'no-state':
      return [{ kind: 'no-state', pattern, file }];
    case 'failed':
      return [
        { kind: 'failed', pattern, file, states, failure: node.lastRecovery?.failure ?? 'agent' },
      ];
    default:
      return [{ kind: state, pattern, file, states }];
  }
}

/**
 * The shortest way from `start` back to the item through files not done, as the item's file
 * then `start` and the files between; null when there is none among the files read.
 */
function cycleThrough(graph: DependencyGraph, start: string): string[] | null {
  const cameFrom = new Map<string, string | null>([[start, null]]);
  const queue = [start];
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    const node = graph.files.get(at);
    if (node?.kind !== 'request' || dependencyState(node).state === 'done') continue;
    for (const next of node.dependsOn.flatMap((e) => (e.kind === 'files' ? e.files : []))) {
      if (next === graph.file) {
        const path = [at];
        for (let back = cameFrom.get(at); back; back = cameFrom.get(back)) path.unshift(back);
        return [graph.file, ...path];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, at);
        queue.push(next);
      }
    }
  }
  return null;
}

/**
 * Whether the blocker is a mistake in the files that holds the item until a human edits one: a
 * cycle, an entry outside the root, a dependency with no state or unreadable. A dependency that
 * runs, waits for approval or failed is in view on its own; an entry that names no file yet may
 * name one that an earlier step writes.
 */
export function isHeldByMistake(blocker: Blocker): boolean {
  return ['cycle', 'outside-root', 'no-state', 'unreadable'].includes(blocker.kind);
}

/** One line for `engine status` and the daemon's log: what holds the item, and why. */
export function blockerText(blocker: Blocker): string {
  switch (blocker.kind) {
    case 'pending':
      return `after ${blocker.file} (${blocker.states.join(' ')})`;
    case 'needs':
      return `after ${blocker.file}, which waits for approval (${blocker.states.join(' ')})`;
    case 'failed':
      return `after ${blocker.file}, which failed (${blocker.failure}) and went back to ${blocker.states.join(' ')}: held until it is retried and done`;
    case 'no-state':
      return `after ${blocker.file}, which carries no lifecycle tag, so it is never done`;
    case 'unreadable':
      return `after ${blocker.file}, which cannot be read: ${blocker.reason}`;
    case 'missing':
      return `Depends On ${blocker.pattern} names no file`;
    case 'outside-root':
      return `Depends On ${blocker.pattern} is outside the project root: refused`;
    case 'cycle':
      return `a cycle: ${[...blocker.cycle, blocker.cycle[0]].join(' → ')}, none can start`;
  }
}
