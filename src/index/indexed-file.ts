/**
 * What the live tag index keeps of one markdown file: its tag occurrences, or that `find` must
 * read it itself at query time (a "special" file), or nothing (no tag: not kept at all).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { TagOccurrence, TagPlace, TagScan } from '../tags/scan-tags.js';
import { decodeText, MAX_PARSE_BYTES } from '../tags/source-text.js';
import { scanTagsFast } from '../tags/scan-fast.js';

/** A tag occurrence as `engine tag find --json` prints it: all the index keeps of one. */
export interface IndexedOccurrence {
  tag: string;
  line: number;
  column: number;
  place: TagPlace;
}

/**
 * - `tags`: its occurrences (a file without any is not kept);
 * - `special`: `find` reads it at query time, with the same code as without a daemon, because
 *   the answer depends on the pattern's bytes (too large, not UTF-8, front matter problems, a tag
 *   not written as it reads) or on a file the watch does not see (a symlink, unreadable, a
 *   parse that failed);
 * - `none`: no tag, or gone.
 */
export type IndexedFile =
  | { kind: 'tags'; occurrences: PackedOccurrences; read: TextRead }
  | { kind: 'special' }
  | { kind: 'none' };

/** A file's text and the stat a status needs, as the index read them (for its `seen`). */
export interface TextRead {
  text: string;
  mtimeMs: number;
  nlink: number;
  /** The fast path's scan of `text`, when it made one: `seen` need not scan the text again. */
  scan: TagScan | null;
}

/**
 * A file's occurrences as small integers, three a piece: its tag's number (TagNames) times four
 * plus its place's, its line, its column; written as a string of UTF-16 code units, 15 bits of an
 * integer each, the top bit set on all of an integer's units but its last (most take one unit).
 * A string is one object with no pointers in it: a file with one occurrence costs 24 bytes of
 * heap, where an array of its integers took 120 (the index of 50,000 files: about 5 MB less).
 */
export type PackedOccurrences = string;

const LOW = 0x7fff;
const MORE = 0x8000;
/** Code units per String.fromCharCode call: its arguments are bounded. */
const CHUNK = 4096;

function pushUnits(units: number[], n: number): void {
  // Highest 15-bit group first, so that reading accumulates left to right.
  let shift = 0;
  while (n >= 2 ** (shift + 15)) shift += 15;
  for (; shift > 0; shift -= 15) units.push(MORE | (Math.floor(n / 2 ** shift) & LOW));
  units.push(n & LOW);
}

function stringOf(units: readonly number[]): string {
  let out = '';
  for (let i = 0; i < units.length; i += CHUNK)
    out += String.fromCharCode(...units.slice(i, i + CHUNK));
  return out;
}

const PLACES: readonly TagPlace[] = ['tags-line', 'front-matter', 'prose'];

/**
 * Each tag name once, by number. A name is a string of its own: the locator's tags are slices
 * of the file's text, and a slice keeps the whole text alive (at 50,000 files, 100 MB of texts).
 */
export class TagNames {
  private readonly names: string[] = [];
  private readonly numbers = new Map<string, number>();

  numberOf(tag: string): number {
    let n = this.numbers.get(tag);
    if (n === undefined) {
      n = this.names.length;
      this.names.push(Buffer.from(tag, 'utf8').toString('utf8'));
      this.numbers.set(this.names[n] as string, n);
    }
    return n;
  }

  pack(occurrences: readonly IndexedOccurrence[]): PackedOccurrences {
    const units: number[] = [];
    for (const o of occurrences) {
      pushUnits(units, this.numberOf(o.tag) * 4 + PLACES.indexOf(o.place));
      pushUnits(units, o.line);
      pushUnits(units, o.column);
    }
    return stringOf(units);
  }

  /**
   * The occurrences `keep` takes, made objects again (only those: `find` asks for a few). `keep`
   * is asked once per tag and place, and a file with none kept costs no allocation: a query
   * goes through every tagged file, and most hold only other tags.
   */
  unpack(
    packed: PackedOccurrences,
    keep: (tag: string, place: TagPlace) => boolean = () => true,
  ): IndexedOccurrence[] {
    return this.unpacker(keep)(packed) ?? [];
  }

  /** The numbers of the tags `keep` takes at some place. */
  numbersTaken(keep: (tag: string, place: TagPlace) => boolean): number[] {
    const numbers: number[] = [];
    this.names.forEach((name, n) => {
      if (PLACES.some((place) => keep(name, place))) numbers.push(n);
    });
    return numbers;
  }

  /**
   * unpack with one `keep`, for many files: its answers are kept for the next file. null: none
   * kept.
   */
  unpacker(
    keep: (tag: string, place: TagPlace) => boolean,
  ): (packed: PackedOccurrences) => IndexedOccurrence[] | null {
    // By head: 1 taken, 2 not, 0 not asked yet; a head beyond it (a name numbered since) is asked
    // each time. Bytes, not a Map: a find asks for every occurrence of every tagged file (about
    // 100,000 at 50,000 files).
    const decided = new Uint8Array(this.names.length * 4);
    const takes = (head: number): boolean => {
      const known = decided[head];
      if (known) return known === 1;
      const take = keep(this.names[head >> 2] as string, PLACES[head & 3] as TagPlace);
      if (head < decided.length) decided[head] = take ? 1 : 2;
      return take;
    };
    return (packed) => {
      let out: IndexedOccurrence[] | null = null;
      // No closure or object per file: a find goes through every tagged file.
      for (let i = 0; i < packed.length;) {
        const head = intAt(packed, i);
        i = after(packed, i);
        if (!takes(head)) {
          i = after(packed, after(packed, i));
          continue;
        }
        const line = intAt(packed, i);
        i = after(packed, i);
        const column = intAt(packed, i);
        i = after(packed, i);
        (out ??= []).push({
          tag: this.names[head >> 2] as string,
          line,
          column,
          place: PLACES[head & 3] as TagPlace,
        });
      }
      return out;
    };
  }
}

/** Calls `each` with the tag number of each occurrence in `packed` (a number may come again). */
export function tagNumbersOf(packed: PackedOccurrences, each: (n: number) => void): void {
  for (let i = 0; i < packed.length; i = after(packed, after(packed, after(packed, i))))
    each(intAt(packed, i) >> 2);
}

/** The integer whose units start at `i` of `packed`. */
function intAt(packed: PackedOccurrences, i: number): number {
  let n = 0;
  for (;;) {
    const unit = packed.charCodeAt(i++);
    n = n * MORE + (unit & LOW);
    if (unit < MORE) return n;
  }
}

/** Where the integer whose units start at `i` of `packed` ends: its last unit lacks the top bit. */
function after(packed: PackedOccurrences, i: number): number {
  while (packed.charCodeAt(i) >= MORE) i++;
  return i + 1;
}

/** The locator's answer for a text: the fast path, else remark (off the main thread). */
export type ScanText = (
  text: string,
) => Promise<{ occurrences: TagOccurrence[]; problems: unknown[] }>;

const NONE: IndexedFile = { kind: 'none' };
const SPECIAL: IndexedFile = { kind: 'special' };
// Never follows a symlink (its target changes unseen by the watch); never blocks on a FIFO.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
const HASH = 0x23;
const FENCES = [Buffer.from('---'), Buffer.from('+++')];
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Whether the bytes may hold a tag or a front matter problem: a `#` followed by a letter or
 * digit (a heading's `# ` is none), or front matter (`---` or `+++` first). Most files of a tree
 * are neither and are never decoded or scanned.
 */
export function mayHoldTags(bytes: Buffer): boolean {
  const start = bytes.subarray(0, 3).equals(BOM) ? 3 : 0;
  const first = bytes.subarray(start, start + 3);
  if (FENCES.some((fence) => first.equals(fence))) return true;
  for (
    let at = bytes.indexOf(HASH);
    at >= 0 && at + 1 < bytes.length;
    at = bytes.indexOf(HASH, at + 1)
  ) {
    const next = bytes[at + 1] as number;
    if ((next >= 0x30 && next <= 0x39) || ((next | 0x20) >= 0x61 && (next | 0x20) <= 0x7a))
      return true;
  }
  return false;
}

/** Reads files for the index through one reused buffer, as `find`'s prefilter does. */
export class IndexReader {
  private readonly buffer = Buffer.allocUnsafe(MAX_PARSE_BYTES + 1);

  readonly names = new TagNames();

  constructor(private readonly scan: ScanText) {}

  async read(path: string): Promise<IndexedFile> {
    const stats = { mtimeMs: 0, nlink: 1 };
    const bytes = this.readBytes(path, stats);
    if (bytes === 'gone') return NONE;
    if (bytes === 'special') return SPECIAL;
    if (!mayHoldTags(bytes)) return NONE;
    const file = decodeText(bytes);
    if (!file) return SPECIAL;
    const { text } = file;
    let fast = null;
    let scan;
    try {
      fast = scanTagsFast(text);
      scan = fast ?? (await this.scan(text));
    } catch {
      return SPECIAL;
    }
    if (scan.problems.length > 0) return SPECIAL;
    if (scan.occurrences.length === 0) return NONE;
    // `find` keeps a file only when its bytes hold the pattern: a tag not written as it reads
    // (a YAML escape) would match here and not there.
    const verbatim = scan.occurrences.every(
      (o) => text.slice(o.start, o.end) === (o.bare ? o.tag.slice(1) : o.tag),
    );
    if (!verbatim) return SPECIAL;
    return {
      kind: 'tags',
      occurrences: this.names.pack(scan.occurrences),
      read: { text, ...stats, scan: fast },
    };
  }

  /** `stats` gets the file's mtime and number of names from the read's fstat. */
  private readBytes(
    path: string,
    stats: { mtimeMs: number; nlink: number },
  ): Buffer | 'gone' | 'special' {
    let fd: number;
    try {
      fd = openSync(path, OPEN_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A name that is not UTF-8 is listed with U+FFFD in place of its bytes: find warns of it.
      if (code === 'ENOENT' && path.includes('\uFFFD')) return 'special';
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'gone' : 'special';
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) return 'special';
      stats.mtimeMs = info.mtimeMs;
      stats.nlink = info.nlink;
      let filled = 0;
      while (filled < this.buffer.length) {
        const read = readSync(fd, this.buffer, filled, this.buffer.length - filled, null);
        if (read === 0) break;
        filled += read;
      }
      return filled > MAX_PARSE_BYTES ? 'special' : this.buffer.subarray(0, filled);
    } catch {
      return 'special';
    } finally {
      closeSync(fd);
    }
  }
}
