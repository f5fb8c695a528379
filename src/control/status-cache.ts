/**
 * What each file gave `engine status` (collect-status.ts FileFindings), kept by the daemon until
 * the file changes, so that a status at 50,000 files reads only what changed. Kept only for the
 * files the index holds with their tags (not a symlink, nothing read beyond the file), under
 * one dispatch table and debounce; a watch event at a path forgets it and everything below it.
 * At most MAX_FILES files. Measured at 50,000 files that all carry tags (27,000 of them needing
 * you): the kept findings cost less than the report itself, and a status takes 2 s instead of 30.
 * They are kept compact (compact()): about 10 MB less heap there than a plain copy, and frozen:
 * `engine status` renders a frozen item's lines once (cli/status-lines.ts linesOnce). A file
 * whose findings are one item needing you (most files that give anything) keeps that item alone,
 * its lists made again at each get: 112 bytes less a file (3 MB at 27,000 such files).
 */
import { sep } from 'node:path';
import type { FileFindings, FileFindingsCache } from '../status/collect-status.js';

export const MAX_FILES = 100_000;

/** Every empty list of the kept findings (frozen: typed as Found's lists, which none changes). */
const EMPTY = Object.freeze([]) as never[];
/** What most files give (tags, but none that needs you or is next): one object for them all. */
const NOTHING: FileFindings = Object.freeze({
  waiting: EMPTY,
  needs: EMPTY,
  next: EMPTY,
  claims: EMPTY,
});

/** An item needing you: it has a `kind`, which findings have not. */
type Need = FileFindings['needs'][number];
type Kept = FileFindings | Need;
const isNeed = (kept: Kept): kept is Need => 'kind' in kept;
/** Strings up to this long are kept once for all files (tags, nouns, kinds, places). */
const SHARED_LENGTH = 40;
/** At most this many of them: past it, a string is kept with its file. */
const SHARED_MAX = 10_000;

const isEmpty = (f: FileFindings): boolean =>
  f.waiting.length + f.needs.length + f.next.length + f.claims.length === 0;

export class StatusCache implements FileFindingsCache {
  private readonly entries = new Map<string, Kept>();
  private readonly shared = new Map<string, string>();
  private key = '';
  private epoch = 0;
  /** Bumped by every entry kept, forgotten or cleared: withFindings' lists stand until then. */
  private changes = 0;
  /** withFindings' answer for a list (the index's own, until a file comes or goes). */
  private readonly worth = new WeakMap<
    readonly string[],
    { changes: number; files: readonly string[] }
  >();

  constructor(private readonly keeps: (path: string) => boolean) {}

  /**
   * The findings made under `key` (the table, the debounce): another key starts afresh. The view
   * is bound to its key: a status still running under an older table keeps nothing and reads
   * nothing once another key has taken the cache, so no finding of the old table is kept under
   * the new one.
   */
  under(key: string): FileFindingsCache {
    if (key !== this.key) {
      this.entries.clear();
      this.key = key;
      this.epoch++;
      this.changes++;
    }
    const current = (): boolean => this.key === key;
    return {
      get: (path) => (current() ? this.get(path) : undefined),
      withFindings: (files) => (current() ? this.withFindings(files) : files),
      token: () => (current() ? this.token() : -1),
      set: (path, findings, token) => {
        if (current()) this.set(path, findings, token);
      },
    };
  }

  get(path: string): FileFindings | undefined {
    const kept = this.entries.get(path);
    if (kept === undefined || !isNeed(kept)) return kept;
    const needs = Object.freeze([kept]) as Need[];
    return Object.freeze({ waiting: EMPTY, needs, next: EMPTY, claims: EMPTY });
  }

  token(): number {
    return this.epoch;
  }

  /** `files` less those kept as giving nothing, made again only after a change of the cache. */
  withFindings(files: readonly string[]): readonly string[] {
    const made = this.worth.get(files);
    if (made?.changes === this.changes) return made.files;
    const kept = files.filter((path) => this.entries.get(path) !== NOTHING);
    this.worth.set(files, { changes: this.changes, files: kept });
    return kept;
  }

  set(path: string, findings: FileFindings, token: number): void {
    // A copy: the findings' strings are slices of the file's text, which they would keep alive.
    if (token !== this.epoch || !this.keeps(path)) return;
    if (this.entries.size < MAX_FILES || this.entries.has(path)) {
      this.entries.set(path, this.kept(path, findings));
      this.changes++;
    }
  }

  private kept(path: string, findings: FileFindings): Kept {
    if (isEmpty(findings)) return NOTHING;
    const compact = this.compact(path, findings);
    const { waiting, needs, next, claims } = compact;
    const alone = needs.length === 1 && waiting.length + next.length + claims.length === 0;
    return alone ? (needs[0] as Need) : compact;
  }

  /**
   * A frozen copy (the findings' strings are slices of the file's text, which they would keep
   * alive) that holds its file's path as the key's string, short strings once for all files, and
   * one empty list.
   */
  private compact(path: string, findings: FileFindings): FileFindings {
    const share = (value: unknown): unknown => {
      if (typeof value === 'string') return value === path ? path : this.once(value);
      if (Array.isArray(value)) return value.length === 0 ? EMPTY : Object.freeze(value.map(share));
      if (typeof value !== 'object' || value === null) return value;
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = share(record[key]);
      return Object.freeze(record);
    };
    return share(copyOf(findings)) as FileFindings;
  }

  private once(text: string): string {
    if (text.length > SHARED_LENGTH) return text;
    const kept = this.shared.get(text);
    if (kept !== undefined) return kept;
    if (this.shared.size < SHARED_MAX) this.shared.set(text, text);
    return text;
  }

  /** `path` changed (a file, or a directory and all below it). */
  forget(path: string): void {
    this.epoch++;
    this.changes++;
    this.entries.delete(path);
    const below = path + sep;
    for (const key of this.entries.keys()) if (key.startsWith(below)) this.entries.delete(key);
  }
}

/**
 * A deep copy whose objects hold their properties in themselves: JSON.parse makes them so, where
 * structuredClone adds them one at a time, those past the fourth in an array of their own (at
 * 23,000 kept approvals, 2.8 MB of heap against 2.05). JSON only for plain data (strings, finite
 * numbers, booleans, null, plain objects and arrays), which it gives back as it was; an array's
 * own extra properties it drops, as share's copy of each list does anyway.
 */
function copyOf<T>(value: T): T {
  return isPlainData(value) ? (JSON.parse(JSON.stringify(value)) as T) : structuredClone(value);
}

function isPlainData(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) {
    // A hole is no plain data: JSON would make it null.
    for (let i = 0; i < value.length; i++)
      if (!(i in value) || !isPlainData(value[i])) return false;
    return true;
  }
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every(isPlainData);
}
