/** readRegularFileSync on real files: what the daemon's passes read every request file with. */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PARSE_BYTES, readRegularFileSync } from '../../src/files/read-text-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-read-regular-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readRegularFileSync', () => {
  it('reads empty, small and larger-than-the-parse-limit files whole', async () => {
    const cases = [Buffer.alloc(0), Buffer.from('# R\n**Tags**: #delegated-fix\n')];
    cases.push(Buffer.alloc(MAX_PARSE_BYTES + 10, 'a'));
    for (const [i, content] of cases.entries()) {
      const path = join(dir, `${i}.md`);
      await writeFile(path, content);
      expect(readRegularFileSync(path)?.equals(content)).toBe(true);
    }
  });

  it('returns null for a directory and for a FIFO, without blocking', async () => {
    await mkdir(join(dir, 'x.md'));
    expect(readRegularFileSync(join(dir, 'x.md'))).toBeNull();
    const fifo = join(dir, 'pipe.md');
    execFileSync('mkfifo', [fifo]);
    expect(readRegularFileSync(fifo)).toBeNull();
  });

  it('throws the system error for a missing file', () => {
    expect(() => readRegularFileSync(join(dir, 'missing.md'))).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });
});
