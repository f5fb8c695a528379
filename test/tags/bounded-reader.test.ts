/** The reader behind `tag find`: whole small files, chunked search of large ones, real files. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PARSE_BYTES } from '../../src/tags/source-text.js';
import { BoundedReader } from '../../src/tags/bounded-reader.js';

const NEEDLE = '#needs-x';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-reader-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fileWith(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('BoundedReader', () => {
  const reader = new BoundedReader(Buffer.from(NEEDLE));

  it('returns a small file whole, and the next read does not disturb a decoded copy', async () => {
    const a = await fileWith('a.md', `a ${NEEDLE}\n`);
    const b = await fileWith('b.md', 'b\n');
    const first = reader.read(a);
    expect(first.kind === 'bytes' && first.bytes.toString()).toBe(`a ${NEEDLE}\n`);
    const second = reader.read(b);
    expect(second.kind === 'bytes' && second.bytes.toString()).toBe('b\n');
  });

  it('reads a file of exactly the limit as bytes', async () => {
    const path = await fileWith('limit.md', 'x'.repeat(MAX_PARSE_BYTES));
    const read = reader.read(path);
    expect(read.kind === 'bytes' && read.bytes.length).toBe(MAX_PARSE_BYTES);
  });

  // The needle placed across the first buffer's end and across a later chunk boundary.
  it.each([
    ['at the start', 0],
    ['across the end of the first buffer', MAX_PARSE_BYTES + 1 - 3],
    ['across a later chunk boundary', MAX_PARSE_BYTES + 1 + 64 * 1024 - 3],
    ['at the very end', 3 * MAX_PARSE_BYTES - NEEDLE.length],
  ])('finds the needle in a file over the limit %s', async (_where, at) => {
    const text = 'y'.repeat(at) + NEEDLE + 'y'.repeat(3 * MAX_PARSE_BYTES - at - NEEDLE.length);
    const path = await fileWith('large.md', text);
    expect(reader.read(path)).toEqual({ kind: 'too-large' });
  });

  it('reports a large file without the needle as no match', async () => {
    const path = await fileWith('large-plain.md', 'z'.repeat(2 * MAX_PARSE_BYTES));
    expect(reader.read(path)).toEqual({ kind: 'no-match' });
  });

  it('throws the system error for a missing file', () => {
    expect(() => reader.read(join(dir, 'missing.md'))).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });
});
