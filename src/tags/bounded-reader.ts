/**
 * Reads many files through one reused buffer with synchronous calls. A tree walk makes tens of
 * thousands of small reads; the promise API's FileHandle per file (open, fstat, read, close, each
 * a round trip through the thread pool) cost about 20 times the system calls themselves.
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { MAX_PARSE_BYTES } from './source-text.js';

export type BoundedRead =
  /** The whole file; a view of the reader's buffer, valid until the next read. */
  | { kind: 'bytes'; bytes: Buffer }
  /** Larger than the parse limit and contains the needle. */
  | { kind: 'too-large' }
  /** Larger than the parse limit and cannot match: not worth a warning. */
  | { kind: 'no-match' };

const CHUNK_BYTES = 64 * 1024;
// A FIFO that replaced a file after the walk must not block the read forever.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

export class BoundedReader {
  private readonly buffer = Buffer.allocUnsafe(MAX_PARSE_BYTES + 1);

  constructor(readonly needle: Buffer) {}

  /** Throws the system error (ENOENT, EACCES, ...) when the file cannot be read. */
  read(path: string): BoundedRead {
    const fd = openSync(path, OPEN_FLAGS);
    try {
      const filled = this.fill(fd, 0, this.buffer.length);
      if (filled <= MAX_PARSE_BYTES)
        return { kind: 'bytes', bytes: this.buffer.subarray(0, filled) };
      return this.searchRest(fd, filled) ? { kind: 'too-large' } : { kind: 'no-match' };
    } finally {
      closeSync(fd);
    }
  }

  private fill(fd: number, from: number, to: number): number {
    let filled = from;
    while (filled < to) {
      const read = readSync(fd, this.buffer, filled, to - filled, null);
      if (read === 0) break;
      filled += read;
    }
    return filled;
  }

  /** Searches a file too large to parse in chunks, the first `filled` bytes already in the buffer. */
  private searchRest(fd: number, filled: number): boolean {
    const overlap = Math.max(0, this.needle.length - 1);
    for (let end = filled; ;) {
      if (this.buffer.subarray(0, end).includes(this.needle)) return true;
      const kept = Math.min(overlap, end);
      this.buffer.copy(this.buffer, 0, end - kept, end);
      end = this.fill(fd, kept, kept + CHUNK_BYTES);
      if (end === kept) return false;
    }
  }
}
