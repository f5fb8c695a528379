/**
 * What the reconcile pass remembers of one directory's markdown files (tree-state.ts): each
 * name with its size, mtime and inode. Held as the names, sorted, and one array of doubles, three
 * a file: at 50,000 files a Map of an object a file (its three numbers boxed) took about 6.6 MB
 * of heap, this about 1.6 MB (heap snapshots of the daemon on the bench tree). Never changed in
 * place: a pass builds a directory's table anew, and the rare change between listings (a linked
 * file statted again) makes a new one.
 */
import type { Stats } from 'node:fs';

/** What is kept of a file's stat. */
export type Seen = Pick<Stats, 'size' | 'mtimeMs' | 'ino'>;

/** The numbers kept of a file, three a piece in `seen`. */
const SIZE = 0;
const MTIME = 1;
const INODE = 2;
const WIDTH = 3;

export class FileTable {
  static readonly EMPTY = new FileTable([], new Float64Array(0));

  private constructor(
    /** Sorted by UTF-16 code units, as `<` compares strings. */
    readonly names: readonly string[],
    private readonly seen: Float64Array,
  ) {}

  /** `names` (each once) in any order, with their numbers three a piece in the same order. */
  static ofColumns(names: readonly string[], seen: readonly number[]): FileTable {
    const order = names.map((_, i) => i).sort((a, b) => compare(names[a], names[b]));
    const sorted = new Float64Array(order.length * WIDTH);
    order.forEach((from, to) => {
      for (let k = 0; k < WIDTH; k++) sorted[to * WIDTH + k] = seen[from * WIDTH + k] as number;
    });
    return new FileTable(
      order.map((i) => names[i] as string),
      sorted,
    );
  }

  /** Whether `other` holds the same names with the same numbers. */
  equals(other: FileTable): boolean {
    return (
      this.names.length === other.names.length &&
      this.names.every((name, i) => name === other.names[i]) &&
      this.seen.every((value, i) => value === other.seen[i])
    );
  }

  has(name: string): boolean {
    return this.indexOf(name) >= 0;
  }

  /** Whether `name` is kept with the same size, mtime and inode as `now`. */
  same(name: string, now: Seen): boolean {
    const at = this.indexOf(name) * WIDTH;
    return (
      at >= 0 &&
      this.seen[at + SIZE] === now.size &&
      this.seen[at + MTIME] === now.mtimeMs &&
      this.seen[at + INODE] === now.ino
    );
  }

  /** This table with `name` kept with `stats` (added, or its numbers replaced). */
  with(name: string, stats: Seen): FileTable {
    const found = this.search(name);
    const at = found >= 0 ? found : -found - 1;
    const names = found >= 0 ? this.names : this.names.toSpliced(at, 0, name);
    const seen = new Float64Array(names.length * WIDTH);
    seen.set(this.seen.subarray(0, at * WIDTH));
    seen.set(this.seen.subarray((found >= 0 ? at + 1 : at) * WIDTH), (at + 1) * WIDTH);
    seen[at * WIDTH + SIZE] = stats.size;
    seen[at * WIDTH + MTIME] = stats.mtimeMs;
    seen[at * WIDTH + INODE] = stats.ino;
    return new FileTable(names, seen);
  }

  /** This table without `name`. */
  without(name: string): FileTable {
    const at = this.search(name);
    if (at < 0) return this;
    const seen = new Float64Array((this.names.length - 1) * WIDTH);
    seen.set(this.seen.subarray(0, at * WIDTH));
    seen.set(this.seen.subarray((at + 1) * WIDTH), at * WIDTH);
    return new FileTable(this.names.toSpliced(at, 1), seen);
  }

  private indexOf(name: string): number {
    return Math.max(-1, this.search(name));
  }

  /** The index of `name`, or -(where it would go) - 1. */
  private search(name: string): number {
    let low = 0;
    let high = this.names.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const order = compare(this.names[middle], name);
      if (order === 0) return middle;
      if (order < 0) low = middle + 1;
      else high = middle - 1;
    }
    return -low - 1;
  }
}

/**
 * Collects a listing's files, keeping of each stat only its three numbers (a pass does not hold
 * a directory's Stats objects until its listing ends).
 */
export class FileTableBuilder {
  private readonly names: string[] = [];
  /** Unboxed: an array that only ever holds numbers keeps them as doubles. */
  private readonly seen: number[] = [];

  add(name: string, stats: Seen): void {
    this.names.push(name);
    this.seen.push(stats.size, stats.mtimeMs, stats.ino);
  }

  build(): FileTable {
    return FileTable.ofColumns(this.names, this.seen);
  }
}

function compare(a: string | undefined, b: string | undefined): number {
  return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
}
