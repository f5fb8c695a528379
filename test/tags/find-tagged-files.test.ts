import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findTaggedFiles } from '../../src/tags/find-tagged-files.js';
import { parseTagPattern } from '../../src/tags/tag-name.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('findTaggedFiles (in process, through the worker pool)', () => {
  it('finds real tags and skips copies in code, with the worker running from the sources', async () => {
    const result = await findTaggedFiles({
      paths: ['examples'],
      pattern: parseTagPattern('#needs-implementation'),
    });
    expect(result.skipped).toEqual([]);
    expect(result.matches.map((m) => m.path)).toEqual(['examples/REFACTOR_AUTH_REQUEST.md']);
  });

  it('never runs code from ---js front matter', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-find-'));
    dirs.push(dir);
    const canary = join(dir, 'pwned');
    await writeFile(
      join(dir, 'a.md'),
      `---js\nrequire('fs').writeFileSync(${JSON.stringify(canary)}, 'x')\n---\n**Tags**: #needs-x\n`,
    );
    const result = await findTaggedFiles({ paths: [dir], pattern: parseTagPattern('#needs-x') });
    expect(result.matches).toHaveLength(1);
    const { existsSync } = await import('node:fs');
    expect(existsSync(canary)).toBe(false);
  });

  it('on an odd tree: names a file whose name is not UTF-8, follows symlinks to files only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-find-'));
    dirs.push(dir);
    const tagged = '**Tags**: #needs-x\n';
    await writeFile(join(dir, 'ok.md'), tagged);
    // 'caf\xe9.md' in Latin-1: listed with U+FFFD for the byte, so no file has the name read.
    writeFileSync(
      Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.md')]),
      tagged,
    );
    await mkdir(join(dir, 'real'));
    await writeFile(join(dir, 'real', 'inside.md'), tagged);
    await symlink(join(dir, 'real'), join(dir, 'linked-dir'));
    await symlink(join(dir, 'ok.md'), join(dir, 'link.md'));
    const result = await findTaggedFiles({ paths: [dir], pattern: parseTagPattern('#needs-x') });
    expect(result.matches.map((m) => m.path.slice(dir.length + 1))).toEqual([
      'link.md',
      'ok.md',
      'real/inside.md',
    ]);
    expect(result.skipped).toEqual([
      { path: join(dir, 'caf\uFFFD.md'), reason: 'its name is not UTF-8: not read' },
    ]);
  });
});
