/**
 * A path a command reads that is not there is an error, never an empty answer: `engine status`
 * over a misspelled directory must not read as "nothing needs you". (`engine tag find`'s cases
 * are in tag-find.test.ts.)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, it } from 'vitest';
import { engine, expectError, makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;
beforeEach(async () => {
  t = await makeTempDir('engine-given-paths-');
  await mkdir(t.path('directives'));
  await writeFile(t.path('directives', 'engine.json'), '{}\n');
  await mkdir(t.path('sessions'));
  await writeFile(t.path('sessions', 'a.md'), '# A\n**Tags**: #needs-fix\n');
});
afterEach(async () => t.cleanup());

describe('engine status over given paths', () => {
  it('refuses a path that is not there, a file, and a path through a file', async () => {
    const env = { ENGINE_ASK_DAEMON: '0' };
    expectError(
      await engine(t.dir, ['status', 'sesions'], env),
      'sesions: no such file or directory: nothing searched',
    );
    expectError(
      await engine(t.dir, ['status', 'sessions/a.md'], env),
      'sessions/a.md: not a directory: give the directories of requests',
    );
    expectError(
      await engine(t.dir, ['status', 'sessions/a.md/'], env),
      'sessions/a.md/: not a directory: nothing searched',
    );
  });
});
