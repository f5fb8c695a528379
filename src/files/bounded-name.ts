/**
 * Names derived from a file's name (its lock directory, its temporary files) add a prefix and a
 * suffix to it, and a file name may already have the most bytes a directory entry can hold. Such
 * a name keeps a readable start of the file's name and a hash of the whole name instead, so two
 * long names that share their start never share a lock.
 */
import { createHash } from 'node:crypto';

/** The most bytes in one file name (NAME_MAX on Linux, and on most file systems elsewhere). */
export const NAME_MAX = 255;
const HASH_CHARS = 16;

/**
 * `name` itself when its UTF-8 form has at most `max` bytes; otherwise as much of its start as
 * fits, cut between characters, then `~` and a hash of the whole name: `max` bytes at most.
 */
export function boundedName(name: string, max: number): string {
  const bytes = Buffer.from(name);
  if (bytes.length <= max) return name;
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, HASH_CHARS);
  let end = Math.max(0, max - HASH_CHARS - 1);
  // A UTF-8 continuation byte (10xxxxxx) is inside a character: cut before that character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString()}~${hash}`;
}
