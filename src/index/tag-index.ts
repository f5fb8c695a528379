/**
 * The daemon's live tag index: every markdown file under its watched directories that carries a
 * tag, with its occurrences, kept current from the watch's events and reconcile passes. Files
 * without a tag are not kept (memory: most of a large tree). A change marks its path dirty;
 * the index reads dirty paths again in the background and before each answer, so an answer that
 * follows a sync (index-sync.ts) reflects every write made before the query.
 */
import { lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, sep } from 'node:path';
import {
  isIgnoredDirectoryName,
  isMarkdownPath,
  listMarkdownDirectorySync,
} from '../tags/walk-markdown.js';
import {
  IndexReader,
  type IndexedOccurrence,
  type PackedOccurrences,
  type ScanText,
  type TextRead,
} from './indexed-file.js';
import type { TagPlace } from '../tags/scan-tags.js';
import { TaggedFiles } from './tagged-files.js';

export type { IndexedOccurrence, TextRead } from './indexed-file.js';

/**
 * Told before the index reads a file as it is built; what it returns gets the text of each file
 * kept with its tags, so that the daemon's status warm-up needs no read of its own (one read
 * of a file for both). Awaited: the build goes no faster than it.
 */
export type SeenFiles = (path: string) => (read: TextRead) => Promise<void>;

/** Files read between two turns of the event loop while the index is built. */
const FILES_PER_TURN = 64;
/** filesBelow's lists kept at most (directories asked since the last change). */
const MAX_LISTS_KEPT = 8;

export class TagIndex {
  /** Files with tags, by absolute path (their occurrences packed: indexed-file.ts). */
  private readonly tagged = new TaggedFiles();
  /** Files `find` reads itself at query time (indexed-file.ts). */
  private readonly special = new Set<string>();
  /** Directories that could not be listed, with why (as `find` says it). */
  private readonly unlisted = new Map<string, string>();
  private readonly dirty = new Set<string>();
  /** The kept files in the walk's order, until a file comes or goes (each status lists them). */
  private ordered: string[] | null = null;
  /**
   * filesBelow's lists by directory, until a file comes or goes: a status at 50,000 files asks
   * for the same one every time (about 18 ms to filter again). `special`: a file in it is read
   * at query time, whose existence is checked then.
   */
  private readonly below = new Map<string, { files: string[]; special: boolean }>();
  private readonly reader: IndexReader;
  private flushing: Promise<void> | null = null;
  private built: Promise<void> | null = null;
  private complete = false;
  /** Closed (the daemon stops): a build under way ends at its next file, incomplete. */
  private closed = false;
  private seen: SeenFiles | null = null;

  /**
   * `roots`: absolute directories; `eventsComplete`: whether the watch feeding the index lost no
   * event; `onChange`: after a read changed what the index holds.
   */
  constructor(
    readonly roots: readonly string[],
    scan: ScanText,
    private readonly eventsComplete: () => boolean,
    private readonly onChange: () => void = () => undefined,
  ) {
    this.reader = new IndexReader(scan);
  }

  /**
   * Builds the index once, in the background; resolves when it is complete. `seen`: told of the
   * files the build keeps with their tags.
   */
  build(seen?: SeenFiles): Promise<void> {
    this.built ??= (async () => {
      this.seen = seen ?? null;
      for (const root of this.roots) await this.walk(root);
      this.seen = null;
      if (this.closed) return;
      this.complete = true;
      await this.flush();
    })();
    return this.built;
  }

  /**
   * Ends a build under way at its next file (it resolves, the index incomplete: it answers
   * nothing) and waits for it: a daemon stopped during the build exits at once, not when the
   * build is done (about 10 s at 50,000 files).
   */
  async close(): Promise<void> {
    this.closed = true;
    // Nothing asks it after this; should anything, it answers nothing.
    this.complete = false;
    // A build that failed was said where it was started (DaemonControl): not again here.
    await this.built?.catch(() => undefined);
  }

  /**
   * Whether answers may come from here: built, and the watch has lost no event a reconcile pass
   * has not found since (`eventsComplete`, the watch's own word).
   */
  get trusted(): boolean {
    return this.complete && this.eventsComplete();
  }

  /** The root directory `path` lies in (or is), or null. */
  rootOf(path: string): string | null {
    return this.roots.find((root) => path === root || path.startsWith(root + sep)) ?? null;
  }

  /** A watch event or a reconcile pass's change at `path` (a file or a directory). */
  mark(path: string): void {
    if (this.closed || this.rootOf(path) === null) return;
    this.dirty.add(path);
    setImmediate(() => void this.flush());
  }

  /** Reads every dirty path again; resolves once none is left. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.dirty.size === 0 || !this.complete) return;
    this.flushing = (async () => {
      let changed = false;
      while (this.dirty.size > 0 && !this.closed) {
        const path = this.dirty.values().next().value as string;
        this.dirty.delete(path);
        if (await this.refresh(path)) changed = true;
      }
      if (changed) this.onChange();
    })().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  /**
   * The tagged files at or below `path` with an occurrence `keep` takes, by absolute path, with
   * those occurrences.
   */
  taggedUnder(
    path: string,
    keep: (tag: string, place: TagPlace) => boolean,
  ): Array<[string, IndexedOccurrence[]]> {
    const { names } = this.reader;
    const unpack = names.unpacker(keep);
    const below = path.endsWith(sep) ? path : path + sep;
    const found: Array<[string, IndexedOccurrence[]]> = [];
    const visit = (packed: PackedOccurrences, file: string): void => {
      if (file !== path && !file.startsWith(below)) return;
      const kept = unpack(packed);
      if (kept) found.push([file, kept]);
    };
    this.tagged.forEachHolding(names.numbersTaken(keep), visit);
    return found;
  }

  specialsUnder(path: string): string[] {
    return [...this.special].filter((file) => isAtOrBelow(file, path) && isFileNow(file));
  }

  unlistedUnder(path: string): Array<{ path: string; reason: string }> {
    return [...this.unlisted]
      .filter(([dir]) => isAtOrBelow(dir, path))
      .map(([dir, reason]) => ({ path: dir, reason }));
  }

  /** Whether `path` is kept with its tags (not special: its reading depends on nothing else). */
  isTagged(path: string): boolean {
    return this.tagged.has(path);
  }

  /** The files below `dir` that may carry a tag, in the order of a walk (walk-markdown.ts). */
  filesBelow(dir: string): readonly string[] {
    const prefix = dir.endsWith(sep) ? dir : dir + sep;
    let kept = this.below.get(prefix);
    if (!kept) {
      this.ordered ??= inWalkOrder([...this.tagged.keys(), ...this.special]);
      const files = this.ordered.filter((file) => file.startsWith(prefix));
      kept = { files, special: files.some((file) => !this.tagged.has(file)) };
      if (this.below.size >= MAX_LISTS_KEPT) this.below.clear();
      this.below.set(prefix, kept);
    }
    return kept.special
      ? kept.files.filter((file) => this.tagged.has(file) || isFileNow(file))
      : kept.files;
  }

  /** Files kept (tagged or special), for the footprint. */
  get size(): number {
    return this.tagged.size + this.special.size;
  }

  private async refresh(path: string): Promise<boolean> {
    if (isInIgnoredDirectory(path, this.rootOf(path) ?? path)) return false;
    const link = lstatOrNull(path);
    if (link?.isDirectory()) return this.walk(path);
    const removed = this.forget(path, link === null);
    // A name that is not UTF-8 (U+FFFD in it) cannot be reached by path, only listed.
    if (link === null && isMarkdownPath(path) && isFileNow(path)) return this.keepSpecial(path);
    if (link === null || !isMarkdownPath(path)) return removed;
    // A symlink's target changes with no event at its path: read at query time, if a file then.
    if (link.isSymbolicLink()) return this.keepSpecial(path);
    return (await this.readFile(path)) || removed;
  }

  /** Reads a directory tree again from scratch. */
  private async walk(dir: string): Promise<boolean> {
    let changed = this.forget(dir, true);
    const directories = [dir];
    let sinceTurn = 0;
    while (directories.length > 0 && !this.closed) {
      const next = directories.pop() as string;
      const listing = listMarkdownDirectorySync(next, (problem) => {
        this.unlisted.set(problem.path, problem.reason);
        changed = true;
      });
      directories.push(...listing.directories.reverse());
      for (const link of listing.links) changed = this.keepSpecial(link) || changed;
      for (const file of listing.files) {
        if (this.closed) break;
        if (await this.readFile(file)) changed = true;
        if (++sinceTurn % FILES_PER_TURN === 0) await new Promise(setImmediate);
      }
    }
    return changed;
  }

  private async readFile(path: string): Promise<boolean> {
    const seen = this.seen?.(path);
    const file = await this.reader.read(path);
    if (file.kind !== 'none' && !this.tagged.has(path) && !this.special.has(path)) this.unorder();
    if (file.kind === 'tags') this.tagged.set(path, file.occurrences);
    else if (file.kind === 'special') this.special.add(path);
    if (file.kind === 'tags' && seen) await seen(file.read);
    return file.kind !== 'none';
  }

  private keepSpecial(path: string): boolean {
    if (!this.special.has(path) && !this.tagged.has(path)) this.unorder();
    this.special.add(path);
    return true;
  }

  /** Drops `path` (and, with `below`, everything under it); whether anything was dropped. */
  private forget(path: string, below: boolean): boolean {
    const dropped = this.drop(path, below);
    if (dropped) this.unorder();
    return dropped;
  }

  /** A file came or went: the walk's order and filesBelow's lists are made again when asked. */
  private unorder(): void {
    this.ordered = null;
    this.below.clear();
  }

  private drop(path: string, below: boolean): boolean {
    let dropped = this.tagged.delete(path);
    dropped = this.special.delete(path) || dropped;
    dropped = this.unlisted.delete(path) || dropped;
    if (!below) return dropped;
    for (const store of [this.tagged, this.special, this.unlisted]) {
      for (const key of store.keys()) {
        if (key.startsWith(path + sep)) {
          store.delete(key);
          dropped = true;
        }
      }
    }
    return dropped;
  }
}

/**
 * A walk lists each directory by name, one level at a time: comparing name by name is comparing
 * the paths with the separator below every other character. Compared in place, with no key made
 * per path: a key a path (the paths with the separator replaced) made 12 MB of resident memory at
 * 34,000 files, at the daemon's first status. The kept files are nearly in walk order already
 * (the build walks), which the sort takes in one run: about 17 ms at 34,000 files.
 */
function inWalkOrder(paths: string[]): string[] {
  return paths.sort(walkOrder);
}

const SEP = sep.charCodeAt(0);

function walkOrder(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x === SEP ? -1 : y === SEP ? 1 : x - y;
  }
  return a.length - b.length;
}

function isAtOrBelow(file: string, path: string): boolean {
  return file === path || file.startsWith(path.endsWith(sep) ? path : path + sep);
}

/** Whether `path` lies in (or is) a directory no walk descends into. */
function isInIgnoredDirectory(path: string, root: string): boolean {
  return path
    .slice(root.length)
    .split(sep)
    .some((name) => name !== '' && isIgnoredDirectoryName(name));
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Whether a walk would list `path` as a file now (a symlink: if it leads to one). */
function isFileNow(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    if (!path.includes('\uFFFD')) return false;
    try {
      const name = basename(path);
      return readdirSync(dirname(path), { withFileTypes: true }).some(
        (entry) => entry.name === name && entry.isFile(),
      );
    } catch {
      return false;
    }
  }
}
