import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyItemAction } from '../../src/approve/approve-edits.js';
import { PreconditionError } from '../../src/errors.js';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-approve-edits-'));
  file = join(dir, 'r.md');
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('applyItemAction with the line text a card showed', () => {
  const two = '# Two asks\n\n- Drop the prod table? #needs-fix\n- Rename the flag #needs-fix\n';

  it('approves the inline tag when its line reads as shown', async () => {
    await writeFile(file, two);
    const line = 4;
    await applyItemAction(
      {
        path: file,
        tag: '#needs-fix',
        noun: 'fix',
        line,
        lineText: '- Rename the flag #needs-fix',
      },
      'approve',
    );
    expect(await readFile(file, 'utf8')).toBe(
      two.replace('Rename the flag #needs-fix', 'Rename the flag #delegated-fix'),
    );
  });

  it('refuses, changing nothing, when another #needs-X moved onto the line shown', async () => {
    // The card showed line 3, "Drop the prod table?"; then line 3 was removed, and the other
    // question moved onto line 3 with the same tag. Approving the stale card must not answer it.
    const moved = '# Two asks\n\n- Rename the flag #needs-fix\n';
    await writeFile(file, moved);
    const stale = applyItemAction(
      {
        path: file,
        tag: '#needs-fix',
        noun: 'fix',
        line: 3,
        lineText: '- Drop the prod table? #needs-fix',
      },
      'approve',
    );
    await expect(stale).rejects.toBeInstanceOf(PreconditionError);
    await expect(stale).rejects.toThrow(/line 3 of .* changed since it was shown/);
    expect(await readFile(file, 'utf8')).toBe(moved);
  });

  it('refuses a line past the end of the file', async () => {
    await writeFile(file, '# Short\n');
    const stale = applyItemAction(
      { path: file, tag: '#needs-fix', noun: 'fix', line: 9, lineText: '- x #needs-fix' },
      'approve',
    );
    await expect(stale).rejects.toBeInstanceOf(PreconditionError);
    expect(await readFile(file, 'utf8')).toBe('# Short\n');
  });
});
