/**
 * readRequestFile on real files: what every reader of request files (daemon, claim check,
 * status, await-tag, the writer) goes through. A FIFO or directory is refused without blocking,
 * a file over the parse limit is never read whole, and a file that is gone is told apart from
 * one that cannot be read.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PARSE_BYTES, readRequestFile } from '../../src/files/read-text-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-read-request-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const NEEDLES = ['delegated-', 'claimed-'];

describe('readRequestFile', () => {
  it('reads empty, small and limit-sized files whole, and remembers a BOM', async () => {
    const cases = [
      Buffer.alloc(0),
      Buffer.from('# R\n**Tags**: #delegated-fix\n'),
      Buffer.alloc(MAX_PARSE_BYTES, 'a'),
    ];
    for (const [i, content] of cases.entries()) {
      const path = join(dir, `${i}.md`);
      await writeFile(path, content);
      const read = readRequestFile(path);
      expect(read.kind === 'text' && read.bytes.equals(content)).toBe(true);
    }
    await writeFile(join(dir, 'bom.md'), '\uFEFF# R\n');
    expect(readRequestFile(join(dir, 'bom.md'))).toMatchObject({
      kind: 'text',
      file: { text: '# R\n', bom: true },
    });
  });

  it('gives each read with needles bytes of its own: small, exactly the scratch buffer, past it', async () => {
    const contents = [
      Buffer.from('# A\n**Tags**: #delegated-fix\n'),
      Buffer.from('# B\n**Tags**: #claimed-fix\nlonger than the first\n'),
      Buffer.concat([Buffer.alloc(64 * 1024 - 15, 'x'), Buffer.from('#delegated-fix\n')]),
      Buffer.alloc(64 * 1024, 'x'),
      Buffer.concat([Buffer.alloc(100 * 1024, 'y'), Buffer.from('#delegated-fix\n')]),
      Buffer.from('# C\nno needle here\n'),
    ];
    const reads = [];
    for (const [i, content] of contents.entries()) {
      const path = join(dir, `${i}.md`);
      await writeFile(path, content);
      reads.push(readRequestFile(path, NEEDLES));
    }
    // Read after all the others: no later read changed an earlier one's bytes or text.
    expect(reads.map((read) => read.kind)).toEqual([
      'text',
      'text',
      'text',
      'no-match',
      'text',
      'no-match',
    ]);
    for (const i of [0, 1, 2, 4]) {
      const read = reads[i];
      // Bytes, not only text: a string is a copy whatever the bytes under it were.
      expect(read?.kind === 'text' ? read.bytes : null).toEqual(contents[i]);
    }
  });

  it('refuses a directory and a FIFO without blocking', async () => {
    await mkdir(join(dir, 'x.md'));
    expect(readRequestFile(join(dir, 'x.md'))).toEqual({ kind: 'not-file' });
    const fifo = join(dir, 'pipe.md');
    execFileSync('mkfifo', [fifo]);
    expect(readRequestFile(fifo)).toEqual({ kind: 'not-file' });
    expect(readRequestFile(fifo, NEEDLES)).toEqual({ kind: 'not-file' });
  });

  it('says too-large from the size alone, never reading a huge file whole', async () => {
    // Sparse, 3 GiB: reading it whole would fail (a Buffer holds at most 2 GiB) or take seconds.
    const huge = join(dir, 'huge.md');
    await writeFile(huge, '');
    await truncate(huge, 3 * 1024 ** 3);
    expect(readRequestFile(huge)).toEqual({ kind: 'too-large', size: 3 * 1024 ** 3 });
    await writeFile(join(dir, 'big.md'), Buffer.alloc(MAX_PARSE_BYTES + 1, 'a'));
    expect(readRequestFile(join(dir, 'big.md'))).toMatchObject({ kind: 'too-large' });
  });

  it('with needles, searches a file over the limit in chunks: too-large only when one is there', async () => {
    const content = Buffer.alloc(MAX_PARSE_BYTES + 100_000, 'a');
    await writeFile(join(dir, 'none.md'), content);
    expect(readRequestFile(join(dir, 'none.md'), NEEDLES)).toEqual({ kind: 'no-match' });
    // Across the boundary of the first 64 KiB chunk, and at the very end.
    for (const at of [64 * 1024 - 4, content.length - 'claimed-'.length]) {
      const bytes = Buffer.from(content);
      bytes.write('claimed-', at);
      await writeFile(join(dir, `at-${at}.md`), bytes);
      expect(readRequestFile(join(dir, `at-${at}.md`), NEEDLES)).toMatchObject({
        kind: 'too-large',
      });
    }
  });

  it('with needles, a small file holding none of them is no-match, one holding one is text', async () => {
    await writeFile(join(dir, 'plain.md'), '# Notes\n**Tags**: #needs-fix\n');
    expect(readRequestFile(join(dir, 'plain.md'), NEEDLES)).toEqual({ kind: 'no-match' });
    await writeFile(join(dir, 'work.md'), '# R\n**Tags**: #delegated-fix\n');
    expect(readRequestFile(join(dir, 'work.md'), NEEDLES)).toMatchObject({
      kind: 'text',
      file: { text: '# R\n**Tags**: #delegated-fix\n', bom: false },
    });
  });

  it('says not-text for Latin-1 and binary content', async () => {
    await writeFile(join(dir, 'latin1.md'), Buffer.from('caf\xe9 #delegated-fix\n', 'latin1'));
    expect(readRequestFile(join(dir, 'latin1.md'))).toEqual({ kind: 'not-text' });
    expect(readRequestFile(join(dir, 'latin1.md'), NEEDLES)).toEqual({ kind: 'not-text' });
    await writeFile(join(dir, 'binary.md'), Buffer.from([0x23, 0x00, 0x41]));
    expect(readRequestFile(join(dir, 'binary.md'))).toEqual({ kind: 'not-text' });
  });

  it('tells gone (missing, a dangling link) apart from an error (a link loop, a file as a directory)', async () => {
    expect(readRequestFile(join(dir, 'missing.md'))).toEqual({ kind: 'gone' });
    await symlink(join(dir, 'nowhere.md'), join(dir, 'dangling.md'));
    expect(readRequestFile(join(dir, 'dangling.md'))).toEqual({ kind: 'gone' });
    await symlink(join(dir, 'b.md'), join(dir, 'a.md'));
    await symlink(join(dir, 'a.md'), join(dir, 'b.md'));
    expect(readRequestFile(join(dir, 'a.md'))).toMatchObject({
      kind: 'error',
      error: { code: 'ELOOP' },
    });
    await writeFile(join(dir, 'file.md'), '# R\n');
    expect(readRequestFile(join(dir, 'file.md', 'x.md'))).toMatchObject({
      kind: 'error',
      error: { code: 'ENOTDIR' },
    });
  });
});
