/**
 * The tmux runner's environment hand-over (src/runners/env-file.ts) run by real shells: the file
 * a shell reads back, and the loader that starts a program with exactly that environment.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENV_LOADER,
  envFileText,
  envLoaderArgv,
  writeEnvFile,
} from '../../src/runners/env-file.js';
import { readProbe, writeProbeAgent } from './support.js';

const execFileAsync = promisify(execFile);

/** Values a shell must never interpret; `dir` is where an interpreted one would leave a file. */
function hostileValues(dir: string): Record<string, string> {
  return {
    SUBST: `$(touch ${dir}/pwned-subst)`,
    BACKTICK: `\`touch ${dir}/pwned-backtick\``,
    QUOTES: `it's "quoted" '' ''' \\' \\`,
    LINES: `first\nsecond; touch ${dir}/pwned-line\n'\n`,
    CLOSE: `'; touch ${dir}/pwned-close; '`,
    DOLLAR: '$HOME ${HOME} $1 $@ $$ \\$',
    UNICODE: 'ünïcödé ✓ 日本',
    EMPTY: '',
    SPACES: '  lead and trail  ',
    HASH: '#(touch x) #{pane_id} # comment',
  };
}

let dir: string;
let probe: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'engine-env-file-')));
  probe = writeProbeAgent(dir);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const shells: [string, string[]][] = [['/bin/sh', []]];
// bash is /bin/sh on some systems; in POSIX mode a failed special builtin ends the whole script.
if (existsSync('/bin/bash')) shells.push(['/bin/bash', ['--posix']]);
/** Keeps bash from reading ~/.bashrc, which it does for a first-level shell whose stdin is a socket. */
const SHLVL = '1';

describe('envFileText', () => {
  it.each(shells)('is read back byte for byte by %s, and runs nothing', async (shell, flags) => {
    const values = hostileValues(dir);
    const file = join(dir, 'values.env');
    await writeFile(file, envFileText(values));
    // Prints each variable NUL-terminated: newlines in values survive the trip.
    const script = `. "$1"; for n in ${Object.keys(values).join(' ')}; do printf '%s=%s\\0' "$n" "$(printenv "$n"; echo .)"; done`;
    const { stdout } = await execFileAsync(shell, [...flags, '-c', script, 'sh', file], {
      env: { PATH: process.env.PATH, SHLVL },
    });
    const seen = Object.fromEntries(
      stdout
        .split('\0')
        .filter(Boolean)
        .map((entry) => {
          const at = entry.indexOf('=');
          // printenv adds a newline, and $(...) strips trailing ones: hence the '.' above.
          return [entry.slice(0, at), entry.slice(at + 1).replace(/\n\.$/, '')];
        }),
    );
    expect(seen).toEqual(values);
    expect((await readdir(dir)).filter((name) => name.startsWith('pwned'))).toEqual([]);
  });

  it.each(shells)(
    'sets the other variables when %s refuses one (read-only UID)',
    async (shell, flags) => {
      const file = join(dir, 'readonly.env');
      await writeFile(file, envFileText({ BEFORE: 'b', UID: '12345', AFTER: 'a' }));
      const { stdout } = await execFileAsync(
        shell,
        [...flags, '-c', '. "$1"; echo "$BEFORE $AFTER done"', 'sh', file],
        { env: { SHLVL } },
      );
      expect(stdout).toBe('b a done\n');
    },
  );
});

describe('writeEnvFile', () => {
  it('writes a new file only this user can read, outside any project', async () => {
    const file = await writeEnvFile({ SECRET: 's3cret' });
    try {
      expect(dirname(file)).toBe(tmpdir());
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(file).uid).toBe(process.getuid?.());
    } finally {
      await rm(file, { force: true });
    }
  });
});

describe('ENV_LOADER', () => {
  /** Runs the loader with `env` in its file under a `dirty` environment; resolves to the probe's report. */
  async function load(env: Record<string, string>, dirty: Record<string, string>, cwd?: string) {
    const out = join(dir, `probe-${Math.random().toString(16).slice(2)}.json`);
    const file = await writeEnvFile({ ...env, PROBE_OUT: out, PROBE_ENV: '*' });
    const [shell, ...args] = envLoaderArgv(file, [process.execPath, probe, 'a b', '$(x)']);
    const child = spawn(shell!, args, { env: dirty, stdio: 'ignore', cwd });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { code, seen: readProbe(out), file, pid: child.pid };
  }

  it('execs the argv with exactly the file environment plus the pane variables, and deletes the file', async () => {
    const values = hostileValues(dir);
    const { code, seen, file, pid } = await load(
      { ...values, VAR: 'new', PATH: '/usr/bin:/bin' },
      { VAR: 'old', STALE: '1', TERM: 'tmux-256color', TMUX_PANE: '%7', PATH: process.env.PATH! },
    );
    expect(code).toBe(0);
    expect(seen?.argv).toEqual(['a b', '$(x)']);
    // Every step execs: the pid the loader started as is the program's.
    expect(seen?.pid).toBe(pid);
    expect(seen?.env).toEqual({
      ...values,
      VAR: 'new',
      PATH: '/usr/bin:/bin',
      TERM: 'tmux-256color',
      TMUX_PANE: '%7',
      PWD: process.cwd(),
      PROBE_OUT: expect.any(String),
      PROBE_ENV: '*',
    });
    expect(existsSync(file)).toBe(false);
    expect((await readdir(dir)).filter((name) => name.startsWith('pwned'))).toEqual([]);
  });

  it("keeps the pane's PWD, its directory as given", async () => {
    // tmux sets PWD to its -c directory, which may name the real one through a symlink.
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'link'));
    // (The daemon's own PWD is never in the file: agentEnv leaves it out.)
    const { seen } = await load({}, { PWD: join(dir, 'link') }, join(dir, 'link'));
    expect(seen?.cwd).toBe(join(dir, 'real'));
    expect(seen?.env.PWD).toBe(join(dir, 'link'));
  });

  it('says so and runs nothing when the file is missing', async () => {
    const missing = join(dir, 'no-such-env');
    const marker = join(dir, 'ran');
    const result = await execFileAsync('/bin/sh', [
      '-c',
      ENV_LOADER,
      'engine-env',
      missing,
      '/bin/sh',
      '-c',
      `touch ${marker}`,
    ]).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(126);
    expect(result.stderr).toContain(`engine: cannot read the agent environment ${missing}`);
    expect(existsSync(marker)).toBe(false);
  });
});
