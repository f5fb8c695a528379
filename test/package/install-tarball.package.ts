/**
 * The package as a user gets it: `npm pack` on this clone, the tarball installed into an empty
 * prefix (`npm install -g --prefix`), and its `engine` run from a directory outside the clone.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killTmuxServer } from '../helpers/daemon-harness.js';
import { killProcessesWithEnv } from '../helpers/process-env.js';
import { runProcess } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const CLONE = fileURLToPath(new URL('../../', import.meta.url));

interface PackEntry {
  filename: string;
  files: { path: string }[];
}

let work: string;
let tarball: string;
let files: string[];
let engine: string;
let packageDir: string;
const socket = `engine-pkg-${process.pid}-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engine-package-'));
  // Runs prepack: dist/ cleaned and built again, so nothing stale is packed.
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: CLONE,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const entry = (JSON.parse(packed) as PackEntry[])[0]!;
  tarball = join(work, entry.filename);
  files = entry.files.map((file) => file.path);
  const prefix = join(work, 'prefix');
  // The dependencies come from npm's cache where it has them (CI's `npm ci` filled it).
  execFileSync(
    'npm',
    ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
    { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  engine = join(prefix, 'bin', 'engine');
  packageDir = join(prefix, 'lib', 'node_modules', '@mdtags', 'engine');
}, 300_000);

afterAll(async () => {
  const project = join(work, 'project');
  // The agent's wrapper and the tmux server --once left: ended by socket and by the root.
  killTmuxServer(socket);
  const roots = existsSync(project) ? [project, realpathSync(project)] : [project];
  await waitFor(
    () => killProcessesWithEnv(...roots.map((root) => `ENGINE_ROOT=${root}`)).length === 0,
    { timeoutMs: 10_000, message: 'the session processes of the package test to end' },
  );
  await rm(work, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('packs the runtime files only: no tests, no sources', () => {
    expect(files.filter((path) => /^(test|src|scripts|\.cache|sessions)\//.test(path))).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'dist/cli/main.cjs',
        'dist/cli/find-files.cjs',
        'dist/tags/prefilter-worker.js',
        'dist/board/page/index.html',
        'directives/TAGS.md',
        'LICENSE',
      ]),
    );
    // Only the shipped table: an engine init run in the clone must not pack engine.json and the rest.
    expect(files.filter((path) => path.startsWith('directives/'))).toEqual(['directives/TAGS.md']);
  });
});

describe('the installed engine, outside the clone', () => {
  it('answers --version with the package version', async () => {
    const { version } = JSON.parse(await readFile(join(CLONE, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await runProcess(engine, ['--version'], { cwd: work });
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('finds tags over the files with its own module, and remark in its scan worker', async () => {
    const tree = join(work, 'find-tree');
    for (let d = 0; d < 8; d++) {
      await mkdir(join(tree, `d${d}`), { recursive: true });
      await writeFile(join(tree, `d${d}`, 'a.md'), `# A${d}\n\n**Tags**: #needs-find\n`);
      await writeFile(join(tree, `d${d}`, 'b.md'), '`#needs-find` only in code\n');
    }
    // HTML: remark decides, in the scan pool's worker (a file it cannot scan exits 2).
    await writeFile(join(tree, 'html.md'), '<b>x</b>\n\nText #needs-find\n');
    // The lean path falls back to the full CLI when it fails; without tsc's module of find there
    // is nothing to fall back to, so only dist/cli/find-files.cjs can answer.
    const esm = join(packageDir, 'dist', 'tags', 'find-tagged-files.js');
    await rename(esm, `${esm}.away`);
    try {
      const result = await runProcess(engine, ['tag', 'find', '#needs-find', tree], { cwd: work });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.split('\n').filter(Boolean)).toEqual([
        ...Array.from({ length: 8 }, (_, d) => join(tree, `d${d}`, 'a.md')),
        join(tree, 'html.md'),
      ]);
    } finally {
      await rename(`${esm}.away`, esm);
    }
  });

  it('scaffolds a project with engine init, and dispatches from it with run --once', async () => {
    const project = join(work, 'project');
    await mkdir(project);
    const init = await runProcess(engine, ['init'], { cwd: project });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`Initialized ${project}`);
    expect(existsSync(join(project, 'directives', 'TAGS.md'))).toBe(true);

    const request = join(project, 'sessions', 'fix-it.md');
    await writeFile(request, '# Fix it\n\n**Tags**: #delegated-fix\n');
    const args = ['run', '--monitor-tags', '--once', '--debounce-ms', '0'];
    const agent = ['--tmux-socket', socket, '--agent-cmd', 'true {file}'];
    const run = await runProcess(engine, [...args, ...agent], { cwd: project });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`spawned agent-fix`);
    expect(await readFile(request, 'utf8')).toContain('**Tags**: #claimed-fix');
  });

  it('writes a service whose ExecStart runs the bin link, which an upgrade keeps', async () => {
    const project = join(work, 'project');
    const home = join(work, 'home');
    await mkdir(join(home, 'run'), { recursive: true, mode: 0o700 });
    // No user bus: the unit is written, nothing is enabled.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      XDG_RUNTIME_DIR: join(home, 'run'),
    };
    env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${join(home, 'run', 'no-bus')}`;
    delete env.XDG_CONFIG_HOME;
    const install = await runProcess(engine, ['service', 'install'], { cwd: project, env });
    expect(install.code, install.stderr).toBe(0);
    expect(install.stdout).toContain(`ExecStart=/bin/sh ${engine} run --monitor-tags`);
  });
});
