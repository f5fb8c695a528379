/**
 * The no-work record: the markdown files a daemon's first pass found holding none of the read's
 * needles (`delegated-`, `claimed-`), each with the stat of that read. The next daemon's first
 * pass stats such a file in place of reading it, and reads it when its device, inode, size, mtime
 * or ctime differ: at 50,000 files a stat costs about a quarter of an open, fstat, read and close.
 *
 * ctime moves with every write, truncation, rename onto the name, chmod and utimes, and no call
 * sets it back, so a file changed since it was recorded differs in it. A file changed within
 * RACY_MS before its read is left out: a write after the read, in the same timestamp tick, could
 * leave all five the same (git's "racily clean" entries). The record is kept in
 * sessions/.engine/no-work.json, written whole after each first pass; one that is missing,
 * unreadable, of another version or of other watched paths is not used (every file is read).
 */
import type { Stats } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeTextAtomic } from '../files/write-json-atomic.js';
import { statOrNull } from '../files/stat-or-null.js';
import { engineStateDir } from '../sessions/event-log.js';

const VERSION = 1;

/**
 * How long before its read a file's last change must be for the file to be recorded: more than
 * the coarsest timestamp tick of a file system engine may watch (FAT's mtime: 2 s).
 */
export const RACY_MS = 5_000;

/** Per entry: name, dev, ino, size, mtimeMs, ctimeMs. */
const FIELDS = 6;

/** By directory prefix (the path up to and with its last `/`): the flat entries of its files. */
type Entries = Record<string, Array<string | number>>;

interface RecordFile {
  version: number;
  needles: string[];
  paths: string[];
  dirs: Entries;
}

export function noWorkRecordPath(root: string): string {
  return join(engineStateDir(root), 'no-work.json');
}

export class NoWorkRecord {
  private readonly next: Entries = Object.create(null) as Entries;
  private kept = 0;
  private hits = 0;
  /**
   * Each directory's entry offsets by name, made at its first lookup: a pass lists a directory's
   * files and subdirectories in one sorted loop, so it comes back to a directory many times.
   */
  private readonly offsets = new Map<string, Map<string, number>>();

  private constructor(
    private readonly file: string,
    private readonly header: Omit<RecordFile, 'dirs'>,
    private readonly old: Entries,
  ) {}

  /**
   * The record at `file`, if it is of these needles and watched paths; an empty one otherwise (a
   * missing or damaged file is as good as none: every file is read, and the next record written).
   */
  static async open(file: string, needles: string[], paths: string[]): Promise<NoWorkRecord> {
    const header = { version: VERSION, needles, paths };
    const empty = Object.create(null) as Entries;
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(file, 'utf8'));
    } catch {
      return new NoWorkRecord(file, header, empty);
    }
    const dirs = matching(parsed, header);
    return new NoWorkRecord(file, header, dirs ?? empty);
  }

  /**
   * The stat of `path` when the record holds it and it is unchanged (kept for the next record
   * then); null when it must be read.
   */
  unchanged(path: string): Stats | null {
    const cut = path.lastIndexOf('/') + 1;
    const prefix = path.slice(0, cut);
    const entries = this.old[prefix];
    if (!entries) return null;
    const i = this.offsetsOf(prefix, entries).get(path.slice(cut));
    if (i === undefined) return null;
    const info = statOrNull(path);
    if (!info?.isFile() || !same(entries, i, info)) return null;
    this.hits++;
    const next = this.entriesOf(prefix);
    for (let k = i; k < i + FIELDS; k++) next.push(entries[k] as string | number);
    return info;
  }

  /** `path` was read at `readAt` (ms since the epoch) and holds no needle; `info` is its fstat. */
  keep(path: string, info: Stats, readAt: number): void {
    if (readAt - Math.max(info.mtimeMs, info.ctimeMs) < RACY_MS) return;
    const cut = path.lastIndexOf('/') + 1;
    const { dev, ino, size, mtimeMs, ctimeMs } = info;
    this.entriesOf(path.slice(0, cut)).push(path.slice(cut), dev, ino, size, mtimeMs, ctimeMs);
  }

  /** Files taken from the record unread, and files in the next one. */
  get counts(): { unread: number; kept: number } {
    return { unread: this.hits, kept: this.kept };
  }

  /** Writes the next record (by temp file and rename). */
  async save(): Promise<void> {
    const record: RecordFile = { ...this.header, dirs: this.next };
    await mkdir(dirname(this.file), { recursive: true });
    await writeTextAtomic(this.file, JSON.stringify(record));
  }

  /** Where each name's entry starts in a directory's entries: one search a file, not a scan. */
  private offsetsOf(prefix: string, entries: Array<string | number>): Map<string, number> {
    let offsets = this.offsets.get(prefix);
    if (!offsets) {
      offsets = new Map();
      for (let i = 0; i < entries.length; i += FIELDS) {
        const name = entries[i];
        if (typeof name === 'string' && !offsets.has(name)) offsets.set(name, i);
      }
      this.offsets.set(prefix, offsets);
    }
    return offsets;
  }

  /** The next record's entries of a directory, for one more file. */
  private entriesOf(prefix: string): Array<string | number> {
    this.kept++;
    return (this.next[prefix] ??= []);
  }
}

/** The entries of a parsed record of this version, needles and paths; null for any other. */
function matching(parsed: unknown, header: Omit<RecordFile, 'dirs'>): Entries | null {
  if (typeof parsed !== 'object' || parsed === null) return null;
  const record = parsed as Partial<RecordFile>;
  const sameList = (a: unknown, b: string[]): boolean =>
    Array.isArray(a) && a.length === b.length && a.every((x, i) => x === b[i]);
  if (record.version !== header.version) return null;
  if (!sameList(record.needles, header.needles) || !sameList(record.paths, header.paths))
    return null;
  const dirs = record.dirs;
  if (typeof dirs !== 'object' || dirs === null || Array.isArray(dirs)) return null;
  const entries = Object.create(null) as Entries;
  for (const [prefix, list] of Object.entries(dirs)) {
    if (Array.isArray(list) && list.length % FIELDS === 0) entries[prefix] = list;
  }
  return entries;
}

/** Whether the entry at `i` has the stat `info` has; a damaged entry (a wrong type) never does. */
function same(entries: Array<string | number>, i: number, info: Stats): boolean {
  return (
    entries[i + 1] === info.dev &&
    entries[i + 2] === info.ino &&
    entries[i + 3] === info.size &&
    entries[i + 4] === info.mtimeMs &&
    entries[i + 5] === info.ctimeMs
  );
}
