/**
 * What the live tag index keeps of one markdown file: its tag occurrences, or that `find` must
 * read it itself at query time (a "special" file), or nothing (no tag: not kept at all).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { TagOccurrence, TagPlace } from '../tags/scan-tags.js';
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
  { kind: 'tags'; occurrences: IndexedOccurrence[] } | { kind: 'special' } | { kind: 'none' };

/** The locator's answer for a text: the fast path, else remark (off the main thread). */
export type ScanText = (
  text: string,
) => Promise<{ occurrences: TagOccurrence[]; problems: unknown[] }>;

const NONE: IndexedFile = { kind: 'none' };
const SPECIAL: IndexedFile = { kind: 'special' };
// Never follows a symlink (its target changes unseen by the watch); never blocks on a FIFO.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
// A file with no `#` and no front matter fence can carry no tag and no front matter problem.
const HASH = 0x23;
const FENCE = Buffer.from('---');

/** Reads files for the index through one reused buffer, as `find`'s prefilter does. */
export class IndexReader {
  private readonly buffer = Buffer.allocUnsafe(MAX_PARSE_BYTES + 1);

  constructor(private readonly scan: ScanText) {}

  async read(path: string): Promise<IndexedFile> {
    const bytes = this.readBytes(path);
    if (bytes === 'gone') return NONE;
    if (bytes === 'special') return SPECIAL;
    if (!bytes.includes(HASH) && !bytes.includes(FENCE)) return NONE;
    const file = decodeText(bytes);
    if (!file) return SPECIAL;
    const { text } = file;
    let scan;
    try {
      scan = scanTagsFast(text) ?? (await this.scan(text));
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
      occurrences: scan.occurrences.map(({ tag, line, column, place }) => ({
        tag,
        line,
        column,
        place,
      })),
    };
  }

  private readBytes(path: string): Buffer | 'gone' | 'special' {
    let fd: number;
    try {
      fd = openSync(path, OPEN_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'gone' : 'special';
    }
    try {
      if (!fstatSync(fd).isFile()) return 'special';
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
