/**
 * The index's files with tags, by absolute path, and for the tags `find` asked about, which files
 * hold them (a posting list each). A find for one tag otherwise decoded every tagged file: about
 * 14 ms and its garbage at 50,000 files, for an answer of a few hundred. A list is made by one
 * pass over the files when its tag is first asked for, and kept current by each write here.
 */
import { tagNumbersOf, type PackedOccurrences } from './indexed-file.js';

/** A tag held by more files than this is not listed: a find for it goes through every file. */
const MAX_LISTED = 2048;
/** Lists kept at most (all dropped when one more is asked for): bounds their memory. */
const MAX_LISTS = 16;
/** A question about more tags than this goes through every file (a wide glob). */
const MAX_ASKED = 8;

type Visit = (packed: PackedOccurrences, file: string) => void;

export class TaggedFiles {
  private readonly files = new Map<string, PackedOccurrences>();
  /** By tag number, the files holding it; null: too many to list. */
  private readonly lists = new Map<number, Set<string> | null>();

  get size(): number {
    return this.files.size;
  }

  has(file: string): boolean {
    return this.files.has(file);
  }

  keys(): IterableIterator<string> {
    return this.files.keys();
  }

  set(file: string, packed: PackedOccurrences): void {
    this.files.set(file, packed);
    if (this.lists.size === 0) return;
    const held = new Set<number>();
    tagNumbersOf(packed, (n) => held.add(n));
    for (const [n, list] of this.lists) {
      if (!list) continue;
      if (!held.has(n)) list.delete(file);
      else if (list.add(file).size > MAX_LISTED) this.lists.set(n, null);
    }
  }

  delete(file: string): boolean {
    if (!this.files.delete(file)) return false;
    for (const list of this.lists.values()) list?.delete(file);
    return true;
  }

  /** Each file holding a tag of one of `numbers`, once; perhaps others too (a caller filters). */
  forEachHolding(numbers: readonly number[], visit: Visit): void {
    const lists = numbers.length > MAX_ASKED ? null : this.listsOf(numbers);
    // Map.forEach makes no [file, packed] pair per file.
    if (!lists) return this.files.forEach(visit);
    const seen = lists.length > 1 ? new Set<string>() : null;
    for (const list of lists) {
      for (const file of list) {
        if (seen?.has(file)) continue;
        seen?.add(file);
        visit(this.files.get(file) as PackedOccurrences, file);
      }
    }
  }

  /** The lists of `numbers`, made where missing; null when one is too long to keep. */
  private listsOf(numbers: readonly number[]): Array<Set<string>> | null {
    let missing = numbers.filter((n) => !this.lists.has(n));
    if (this.lists.size + missing.length > MAX_LISTS) {
      this.lists.clear();
      missing = [...numbers];
    }
    if (missing.length > 0) this.listAll(missing);
    const lists: Array<Set<string>> = [];
    for (const n of numbers) {
      const list = this.lists.get(n);
      if (!list) return null;
      lists.push(list);
    }
    return lists;
  }

  /** One pass over the files for all of `numbers`. */
  private listAll(numbers: readonly number[]): void {
    const made = new Map(numbers.map((n) => [n, new Set<string>()]));
    this.files.forEach((packed, file) => tagNumbersOf(packed, (n) => made.get(n)?.add(file)));
    for (const [n, list] of made) this.lists.set(n, list.size > MAX_LISTED ? null : list);
  }
}
