/**
 * What a test runs as another user (`nobody`), put where that user can read it. The checkout may
 * sit in a directory only its owner can enter (a root clone in /root, `mktemp -d`), so the other
 * user cannot load dist/ or node_modules/ from there, nor have it as its working directory.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { AS_NOBODY } from '../process/spawned.js';
import { shellQuote } from './daemon-harness.js';

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));

/** A fresh temp directory anyone can read and enter; `remove()` deletes it. */
export class OtherUserDir {
  private constructor(readonly dir: string) {}

  static async create(): Promise<OtherUserDir> {
    const dir = await mkdtemp(join(tmpdir(), 'engine-other-user-'));
    await chmod(dir, 0o755);
    return new OtherUserDir(dir);
  }

  /**
   * Copies the built engine as installed: dist/, directives/, package.json and the packages it
   * needs at run time, and the test agent. Resolves to the CLI and the `--agent-cmd` to run there.
   */
  async installEngine(): Promise<{ cli: string; agentCmd: string }> {
    const parts = ['package.json', 'dist', 'directives', 'test/fixtures/test-agent.mjs'];
    for (const part of [...parts, ...runtimePackages()])
      await cp(join(CHECKOUT, part), join(this.dir, part), {
        recursive: true,
        verbatimSymlinks: true,
      });
    this.makeReadable();
    const agent = join(this.dir, 'test/fixtures/test-agent.mjs');
    return {
      cli: join(this.dir, 'dist/cli/main.cjs'),
      agentCmd: `${shellQuote(process.execPath)} ${shellQuote(agent)} {file}`,
    };
  }

  /**
   * Starts `engine run` as nobody from the copy `installEngine()` made here, with `args` (built
   * from its `--agent-cmd` value). The caller kills `child` should the test fail.
   */
  async runEngineAsNobody(args: (agentCmd: string) => string[]): Promise<{
    child: ChildProcess;
    output(): string;
    exited: Promise<number | null>;
  }> {
    const { cli, agentCmd } = await this.installEngine();
    const child = spawn(
      'setpriv',
      [...AS_NOBODY, process.execPath, cli, 'run', '--monitor-tags', ...args(agentCmd)],
      { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: '/tmp' } },
    );
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { child, output: () => output, exited };
  }

  /** Bundles a TypeScript script with everything it imports into one file; resolves to it. */
  async bundle(entry: string): Promise<string> {
    const outfile = join(this.dir, `${relative(CHECKOUT, entry).replace(/[/.]/g, '-')}.mjs`);
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
    });
    this.makeReadable();
    return outfile;
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }

  /** A checkout made under umask 077 has files only their owner can read; copies keep modes. */
  private makeReadable(): void {
    execFileSync('chmod', ['-R', 'a+rX', this.dir]);
  }
}

/**
 * The node_modules directories (relative to the checkout) of the packages the engine needs at
 * run time: its dependencies and optional dependencies, and theirs, resolved as Node does.
 */
function runtimePackages(): string[] {
  const found = new Set<string>();
  const visit = (from: string) => {
    const manifest = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const names = Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies });
    for (const name of names) {
      const dir = resolvePackage(from, name);
      // An optional dependency for another platform is not installed.
      if (dir === null || found.has(dir)) continue;
      found.add(dir);
      visit(dir);
    }
  };
  visit(CHECKOUT);
  // A package nested in another one's node_modules is copied with it.
  const dirs = [...found];
  return dirs
    .filter((dir) => !dirs.some((other) => dir.startsWith(`${other}/`)))
    .map((dir) => relative(CHECKOUT, dir));
}

function resolvePackage(from: string, name: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (relative(CHECKOUT, dir) === '') return null;
  }
}
