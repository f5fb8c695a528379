/**
 * `engine cancel`, `retry` and `close` find the project root as `engine attach` does (docs/CLI.md,
 * "The project root"): the project of the request file, wherever they run; `--root` must be a
 * project; with none, an error, and nothing is written.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { TEST_TAGS_MD } from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';

let base: string;
let proj: string;
let elsewhere: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'engine-acts-root-'));
  proj = join(base, 'proj');
  elsewhere = join(base, 'elsewhere');
  await mkdir(join(proj, 'directives'), { recursive: true });
  await mkdir(join(proj, 'sessions'));
  await mkdir(elsewhere);
  await writeFile(join(proj, 'directives', 'TAGS.md'), TEST_TAGS_MD);
});
afterEach(() => rm(base, { recursive: true, force: true }));

it("acts in the request file's project when run from a directory in no project", async () => {
  const file = join(proj, 'sessions', 'R.md');
  await writeFile(file, '# R\n**Tags**: #needs-fix\n');
  const result = await runCli(['retry', file], { cwd: elsewhere });
  expect(result.code, result.stderr).toBe(0);
  expect(await readFile(file, 'utf8')).toBe('# R\n**Tags**: #delegated-fix\n');
  const log = await readFile(join(proj, 'sessions', '.engine', 'events.jsonl'), 'utf8');
  expect(JSON.parse(log.trim())).toMatchObject({ event: 'retried', noun: 'fix' });
});

it.each(['cancel', 'retry', 'close'])(
  'engine %s: a --root that is no project, or no project at all, is an error and nothing is written',
  async (command) => {
    const file = join(elsewhere, 'R.md');
    const text = '# R\n**Tags**: #needs-fix\n';
    await writeFile(file, text);
    const none = await runCli([command, file], { cwd: elsewhere });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^ERROR: Not in an engine project: /);
    const root = await runCli([command, file, '--root', elsewhere], { cwd: proj });
    expect(root.code).toBe(1);
    expect(root.stderr).toContain(`--root ${elsewhere} is not an engine project`);
    expect(await readFile(file, 'utf8')).toBe(text);
  },
);
