/**
 * The lean path of `engine tag find` and `engine status` (src/cli/lean-entry.ts) says exactly
 * what the full CLI says: each command line here is run as is (lean) and in a form only yargs
 * reads (`--no-verbose`, `--no-json`, `--json=true`: the lean path leaves it to the full CLI).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine, makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir('engine-lean-');
  await mkdir(t.path('directives'));
  await mkdir(t.path('sessions'));
  await writeFile(t.path('directives', 'TAGS.md'), '# Tags\n');
  await writeFile(t.path('sessions', 'a.md'), '# A\n\n**Tags**: #needs-a\n');
  await writeFile(t.path('sessions', 'big.md'), `#needs-a\n${'x'.repeat(1024 * 1024)}`);
});

afterEach(async () => {
  await t.cleanup();
});

const cases: Array<{ args: string[]; full: string[]; env?: NodeJS.ProcessEnv; cwd?: string }> = [
  { args: ['tag', 'find', '#needs-a'], full: ['--no-verbose'] },
  { args: ['tag', 'find', '#needs-a', 'sessions', '--context', '--json'], full: ['--no-verbose'] },
  { args: ['tag', 'find', '#bad pattern'], full: ['--no-verbose'] },
  { args: ['tag', 'find', '#x'], full: ['--no-verbose'], env: { ENGINE_SCAN_TIMEOUT_MS: 'soon' } },
  { args: ['status'], full: ['--json=true'] },
  { args: ['status', '--root', '/nonexistent-engine-root'], full: ['--no-json'] },
  { args: ['status'], full: ['--no-json'], cwd: '/' },
];

describe('the lean entry path', () => {
  for (const { args, full, env, cwd } of cases) {
    it(`engine ${args.join(' ')}${env ? ` (${Object.keys(env).join(', ')})` : ''}`, async () => {
      // `status --json=true` is compared with `status --json`: the same command for yargs.
      const lean = await engine(
        cwd ?? t.dir,
        full[0] === '--json=true' ? [...args, '--json'] : args,
        env,
      );
      const yargs = await engine(cwd ?? t.dir, [...args, ...full], env);
      expect(lean).toEqual(yargs);
    });
  }
});

/** A command line, and a spelling of the same that only yargs reads (the lean path refuses it). */
const sameCommands: Array<[string[], string[]]> = [
  [
    ['tag', 'find', '#needs-a', '--json', 'false'],
    ['tag', 'find', '#needs-a', '--json=false'],
  ],
  [
    ['tag', 'find', '#needs-a', '--context', 'false'],
    ['tag', 'find', '#needs-a', '--no-context'],
  ],
  [
    ['tag', 'find', '#needs-a', '--json', 'true'],
    ['tag', 'find', '#needs-a', '--json=true'],
  ],
  [
    ['status', '--json', 'false'],
    ['status', '--no-json'],
  ],
  [
    ['status', '--json', 'true', 'sessions'],
    ['status', 'sessions', '--json=true'],
  ],
  [
    ['tag', 'find', '#needs-a', '--json', '--json'],
    ['tag', 'find', '#needs-a', '--json=true'],
  ],
  [
    ['tag', 'find', '--', '#needs-a'],
    ['tag', 'find', '--no-verbose', '--', '#needs-a'],
  ],
  [
    ['tag', 'find', '-h'],
    ['tag', 'find', '-h', '--no-verbose'],
  ],
];

describe('a command line yargs reads otherwise than parseArgs: the full CLI takes it', () => {
  for (const [args, full] of sameCommands) {
    it(`engine ${args.join(' ')}`, async () => {
      expect(await engine(t.dir, args)).toEqual(await engine(t.dir, full));
    });
  }
});

describe('the built lean path', () => {
  it('is one CommonJS module: it loads none of dist/ but the full CLI and what only the files need', async () => {
    const built = await readFile(new URL('../../dist/cli/main.cjs', import.meta.url), 'utf8');
    const relative = [...built.matchAll(/(?:from|import\(|require\()\s*["'](\.[^"']*)["']/g)];
    expect(
      new Set(relative.map((m) => `${m[0].startsWith('require') ? 'require' : 'import'} ${m[1]}`)),
    ).toEqual(
      new Set([
        'import ./full-cli.js',
        // Left for tsc's modules; the bundle requires find-files.cjs in its place.
        'import ../tags/find-tagged-files.js',
        'import ../status/collect-status.js',
      ]),
    );
    expect(built).toContain('("./find-files.cjs")');
  });

  it('requires find over the files as one CommonJS module, which starts its workers from dist/tags/', async () => {
    const built = await readFile(new URL('../../dist/cli/find-files.cjs', import.meta.url), 'utf8');
    expect([...built.matchAll(/(?:from|import\(|require\()\s*["'](\.[^"']*)["']/g)]).toEqual([]);
    expect(built).toContain('new URL(`../tags/${name}.js`, __engineModuleUrl)');
    for (const worker of ['prefilter-worker', 'scan-worker']) {
      await expect(
        readFile(new URL(`../../dist/tags/${worker}.js`, import.meta.url), 'utf8'),
      ).resolves.toBeTruthy();
    }
  });

  it("find's prefilter worker is one module: it imports nothing from dist/", async () => {
    const url = new URL('../../dist/tags/prefilter-worker.js', import.meta.url);
    const built = await readFile(url, 'utf8');
    expect([...built.matchAll(/(?:from|import\()\s*["'](\.[^"']*)["']/g)]).toEqual([]);
  });
});
