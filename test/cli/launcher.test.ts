/**
 * The `engine` command's first two lines (scripts/bundle-lean.mjs LAUNCHER): run as a program, the
 * built dist/cli/main.cjs is a sh script that runs itself with the `node` on PATH, every argument
 * as it came, leaving NODE_EXTRA_CA_CERTS out of `status` and `tag` only (Node parses that bundle
 * at start; those commands open no TLS connection and start no program that would), and giving
 * `run` MALLOC_ARENA_MAX=2 where the user set none (the daemon's resident memory).
 */
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { delimiter } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, runProcess } from '../helpers/run-cli.js';
import { makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir('engine-launcher-');
  // A stand-in `node` that says what it was given.
  await mkdir(t.path('bin'));
  await writeFile(
    t.path('bin', 'node'),
    '#!/bin/sh\necho "certs=${NODE_EXTRA_CA_CERTS-unset}"\necho "arena=${MALLOC_ARENA_MAX-unset} ${ENGINE_LAUNCHER_ARENA-unset}"\nfor a in "$@"; do echo "arg=$a"; done\n',
  );
  await chmod(t.path('bin', 'node'), 0o755);
});

afterEach(async () => {
  await t.cleanup();
});

const env = (): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: `${t.path('bin')}${delimiter}${process.env.PATH ?? ''}`,
  NODE_EXTRA_CA_CERTS: '/etc/extra ca.pem',
});

async function launch(program: string, args: string[]): Promise<string[]> {
  const result = await runProcess(program, args, { env: env(), cwd: t.dir });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return result.stdout.trimEnd().split('\n');
}

describe('the launcher of dist/cli/main.cjs', () => {
  it('runs status and tag commands without NODE_EXTRA_CA_CERTS, every argument intact', async () => {
    expect(await launch(CLI, ['status', '--json'])).toEqual([
      'certs=unset',
      'arena=unset unset',
      `arg=${CLI}`,
      'arg=status',
      'arg=--json',
    ]);
    const tricky = ["#needs-a'b", '$(touch x)', 'two words', ''];
    expect(await launch(CLI, ['tag', 'find', ...tricky])).toEqual([
      'certs=unset',
      'arena=unset unset',
      `arg=${CLI}`,
      'arg=tag',
      'arg=find',
      ...tricky.map((a) => `arg=${a}`),
    ]);
  });

  it('keeps NODE_EXTRA_CA_CERTS for every other command (they start agents)', async () => {
    for (const args of [['run', '--monitor-tags'], ['doctor'], [], ['--root', 'x', 'status']])
      expect((await launch(CLI, args))[0]).toBe('certs=/etc/extra ca.pem');
  });

  it('gives `run` MALLOC_ARENA_MAX=2 and a mark, unless the user set it; no other command', async () => {
    expect((await launch(CLI, ['run', '--monitor-tags']))[1]).toBe('arena=2 1');
    expect((await launch(CLI, ['run', '--once', '--root', 'two words']))[1]).toBe('arena=2 1');
    for (const args of [['doctor'], [], ['--root', 'x', 'run'], ['status'], ['board']])
      expect((await launch(CLI, args))[1]).toBe('arena=unset unset');
    const own = await runProcess(CLI, ['run'], { env: { ...env(), MALLOC_ARENA_MAX: '4' } });
    expect(own.stdout.split('\n')[1]).toBe('arena=4 unset');
    const empty = await runProcess(CLI, ['run'], { env: { ...env(), MALLOC_ARENA_MAX: '' } });
    expect(empty.stdout.split('\n')[1]).toBe('arena= unset');
  });

  it('runs itself by the path it was started by, as npm links a bin', async () => {
    await symlink(CLI, t.path('engine'));
    expect(await launch(t.path('engine'), ['status'])).toEqual([
      'certs=unset',
      'arena=unset unset',
      `arg=${t.path('engine')}`,
      'arg=status',
    ]);
  });

  it('answers as `node dist/cli/main.cjs` does, run by the real node, and so does main.js', async () => {
    await mkdir(t.path('project', 'directives'), { recursive: true });
    const shipped = new URL('../../directives/TAGS.md', import.meta.url);
    await writeFile(t.path('project', 'directives', 'TAGS.md'), await readFile(shipped));
    await mkdir(t.path('project', 'sessions'));
    await writeFile(t.path('project', 'sessions', 'a.md'), '# A\n\n**Tags**: #needs-a\n');
    const cwd = t.path('project');
    // dist/cli/main.js: the entry of earlier builds, which a service unit or an agent shim may name.
    const earlier = CLI.replace(/main\.cjs$/, 'main.js');
    for (const args of [['tag', 'find', '#needs-a'], ['--version'], ['status', '--json']]) {
      const direct = await runProcess(CLI, args, { cwd });
      const byNode = await runProcess(process.execPath, [CLI, ...args], { cwd });
      const byEarlier = await runProcess(process.execPath, [earlier, ...args], { cwd });
      expect(direct).toEqual(byNode);
      expect(byEarlier).toEqual(byNode);
      expect(direct.code).toBe(0);
    }
  });
});
