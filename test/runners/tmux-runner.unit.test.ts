/** TmuxRunner with an injected exec: the exact tmux calls, without a tmux server. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/errors.js';
import { ENV_LOADER } from '../../src/runners/env-file.js';
import { agentEnv, sanitizeWindowName, uniqueWindowName } from '../../src/runners/runner.js';
import {
  TmuxError,
  TmuxRunner,
  escapeTmuxArgument,
  escapeTmuxFormat,
  tmuxArgs,
  tmuxEnv,
  type ExecFn,
} from '../../src/runners/tmux-runner.js';

interface Call {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** The environment files of the launches: no loader runs them here, so the tests delete them. */
const envFiles: string[] = [];
afterEach(async () => {
  for (const file of envFiles.splice(0)) await rm(file, { force: true });
});

/** The environment file a tmux call hands to the loader, if it starts one. */
function envFileOf(args: readonly string[]): string | undefined {
  const at = args.indexOf(ENV_LOADER);
  return at === -1 ? undefined : args[at + 2];
}

/** An exec that records calls and answers from `respond` (throw = tmux failed with that stderr). */
function fakeExec(respond: (args: string[]) => string | { fail: string } | { errno: string }): {
  exec: ExecFn;
  calls: Call[];
} {
  const calls: Call[] = [];
  const exec: ExecFn = async (file, args, options) => {
    calls.push({ file, args: [...args], env: options.env });
    const envFile = envFileOf(args);
    if (envFile !== undefined) envFiles.push(envFile);
    const answer = respond([...args]);
    if (typeof answer === 'string') return { stdout: answer, stderr: '' };
    if ('errno' in answer) {
      throw Object.assign(new Error(`spawn ${file} ${answer.errno}`), { code: answer.errno });
    }
    throw Object.assign(new Error('Command failed'), { code: 1, stderr: `${answer.fail}\n` });
  };
  return { exec, calls };
}

/** Answers like a server where session `dispatch` exists with the given windows. */
function server(windows: string[] = []) {
  return fakeExec((args) => {
    const command = args.find((arg) => /^[a-z]+-[a-z]+$/.test(arg));
    if (command === 'has-session') return '';
    if (command === 'list-windows') return windows.map((name) => `${name}\n`).join('');
    if (command === 'new-window') return '4242 %17\n';
    if (command === 'list-panes') return '%1 0\n%17 0\n%18 1\n';
    if (command === 'kill-window') return '';
    return { fail: `unexpected ${command}` };
  });
}

const spec = { name: 'agent-fix-1', argv: ['claude', '/fix a.md'], cwd: '/tmp', env: { K: 'v' } };

describe('tmuxArgs and tmuxEnv', () => {
  it('adds -L only for a named server', () => {
    expect(tmuxArgs('sock', 'has-session', '-t', '=dispatch')).toEqual([
      '-L',
      'sock',
      'has-session',
      '-t',
      '=dispatch',
    ]);
    expect(tmuxArgs(undefined, 'list-panes')).toEqual(['list-panes']);
  });

  it('removes TMUX and TMUX_PANE, keeps the rest', () => {
    expect(tmuxEnv({ TMUX: '/tmp/x,1,0', TMUX_PANE: '%3', PATH: '/bin', HOME: '/h' })).toEqual({
      PATH: '/bin',
      HOME: '/h',
    });
  });
});

describe('escaping for tmux', () => {
  it('writes a trailing ";" as "\\;" and leaves everything else alone', () => {
    expect(escapeTmuxArgument('x;')).toBe('x\\;');
    expect(escapeTmuxArgument(';')).toBe('\\;');
    expect(escapeTmuxArgument('x\\;')).toBe('x\\\\;');
    expect(escapeTmuxArgument('a;b')).toBe('a;b');
    expect(escapeTmuxArgument('$(x) #{y}')).toBe('$(x) #{y}');
  });

  it('doubles "#" for format-expanded values', () => {
    expect(escapeTmuxFormat('/tmp/a#(touch x)#{pane_id}##')).toBe(
      '/tmp/a##(touch x)##{pane_id}####',
    );
  });
});

describe('window names', () => {
  it('keeps [A-Za-z0-9._-] only', () => {
    expect(sanitizeWindowName('agent-impl_1.2')).toBe('agent-impl_1.2');
    expect(sanitizeWindowName('agent x/y#{z};$(q)\nü')).toBe('agentxyzq');
    expect(sanitizeWindowName('#{}')).toBe('agent');
  });

  it('adds -2, -3, ... on collision', () => {
    expect(uniqueWindowName('a', [])).toBe('a');
    expect(uniqueWindowName('a', ['a'])).toBe('a-2');
    expect(uniqueWindowName('a', ['a', 'a-2', 'a-4'])).toBe('a-3');
  });
});

describe('TmuxRunner (injected exec)', () => {
  const saved = { TMUX: process.env.TMUX, TMUX_PANE: process.env.TMUX_PANE };
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('launches with new-window -d -P -F on =session:, with -n, -c and -- the loader and argv', async () => {
    process.env.TMUX = '/tmp/tmux-1000/default,123,0';
    process.env.TMUX_PANE = '%0';
    const { exec, calls } = server(['agent-fix-1']);
    const runner = new TmuxRunner({ socket: 'sock', exec });
    const launched = await runner.launch({
      ...spec,
      env: { K: 'v;', SECRET: 's3cret', TMUX: 'x', TMUX_PANE: '%9' },
    });
    const envFile = envFileOf(calls.at(-1)?.args ?? []) ?? '';
    expect(launched).toEqual({
      kind: 'tmux',
      target: '%17',
      windowName: 'agent-fix-1-2',
      pid: 4242,
    });
    expect(calls.map((call) => call.args)).toEqual([
      ['-L', 'sock', 'has-session', '-t', '=dispatch'],
      ['-L', 'sock', 'list-windows', '-t', '=dispatch', '-F', '#{window_name}'],
      [
        '-L',
        'sock',
        'new-window',
        '-d',
        '-P',
        '-F',
        '#{pane_pid} #{pane_id}',
        '-t',
        '=dispatch:',
        '-n',
        'agent-fix-1-2',
        '-c',
        '/tmp',
        '--',
        '/bin/sh',
        '-c',
        ENV_LOADER,
        'engine-env',
        envFile,
        'claude',
        '/fix a.md',
      ],
    ]);
    for (const call of calls) {
      expect(call.file).toBe('tmux');
      expect(call.env.TMUX).toBeUndefined();
      expect(call.env.TMUX_PANE).toBeUndefined();
      // No value reaches an argv, which other users can read in /proc.
      expect(call.args.join('\n')).not.toContain('s3cret');
    }
    // The values go through a file only this user can read; the pane's own TMUX* are tmux's.
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(envFile, 'utf8')).toBe(
      "command export K='v;'\ncommand export SECRET='s3cret'\n",
    );
  });

  it('deletes the environment file of a launch that failed', async () => {
    const { exec, calls } = fakeExec((args) =>
      args.includes('new-window') ? { fail: 'something odd' } : '',
    );
    await expect(new TmuxRunner({ exec }).launch(spec)).rejects.toThrow(/something odd/);
    const envFile = envFileOf(calls.at(-1)?.args ?? []);
    expect(envFile).toBeDefined();
    expect(existsSync(envFile!)).toBe(false);
  });

  it('hands on only shell variable names, and none of the terminal or directory variables', () => {
    expect(
      agentEnv({
        OK_1: 'a',
        _x: 'b',
        '1BAD': 'c',
        'a-b': 'd',
        'BASH_FUNC_f%%': '() { :; }',
        TERM: 'xterm',
        TMUX: 't',
        PWD: '/daemon',
        COLUMNS: '80',
      }),
    ).toEqual({ OK_1: 'a', _x: 'b' });
  });

  it('creates a missing session with -f /dev/null, detached, 200x50', async () => {
    let created = false;
    const { exec, calls } = fakeExec((args) => {
      if (args.includes('has-session')) return { fail: "can't find session: dispatch" };
      if (args.includes('new-session')) {
        created = true;
        return '';
      }
      if (args.includes('list-windows')) return created ? 'zsh\n' : { fail: 'no session' };
      return '7 %3\n';
    });
    await new TmuxRunner({ exec }).launch(spec);
    expect(calls[1]?.args).toEqual([
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      'dispatch',
      '-x',
      '200',
      '-y',
      '50',
    ]);
    // The default server: no -L anywhere.
    for (const call of calls) expect(call.args).not.toContain('-L');
  });

  it('treats "duplicate session" from a racing creator as success', async () => {
    const { exec } = fakeExec((args) => {
      if (args.includes('has-session')) return { fail: 'no server running on /tmp/tmux-0/s' };
      if (args.includes('new-session')) return { fail: 'duplicate session: dispatch' };
      if (args.includes('list-windows')) return '';
      return '7 %3\n';
    });
    await expect(new TmuxRunner({ socket: 's', exec }).launch(spec)).resolves.toMatchObject({
      target: '%3',
      pid: 7,
    });
  });

  it('asks for the session once, not at every launch', async () => {
    const { exec, calls } = server();
    const runner = new TmuxRunner({ exec });
    await runner.launch(spec);
    await runner.launch(spec);
    expect(calls.filter((call) => call.args.includes('has-session'))).toHaveLength(1);
    expect(calls.filter((call) => call.args.includes('new-window'))).toHaveLength(2);
  });

  it('creates the session again when it vanished before list-windows', async () => {
    let checks = 0;
    let lists = 0;
    const { exec, calls } = fakeExec((args) => {
      if (args.includes('has-session'))
        return ++checks === 1 ? '' : { fail: "can't find session: dispatch" };
      if (args.includes('new-session')) return '';
      if (args.includes('list-windows'))
        return ++lists === 1 ? { fail: "can't find session: dispatch" } : '';
      if (args.includes('new-window')) return '8 %4\n';
      return { fail: 'unexpected' };
    });
    await expect(new TmuxRunner({ exec }).launch(spec)).resolves.toMatchObject({ target: '%4' });
    expect(calls.filter((call) => call.args.includes('new-session'))).toHaveLength(1);
  });

  it('creates the session again when it vanished before new-window', async () => {
    let windows = 0;
    const { exec, calls } = fakeExec((args) => {
      if (args.includes('has-session')) return '';
      if (args.includes('list-windows')) return '';
      if (args.includes('new-window')) {
        windows += 1;
        return windows === 1 ? { fail: "can't find session: dispatch" } : '8 %4\n';
      }
      return { fail: 'unexpected' };
    });
    await expect(new TmuxRunner({ exec }).launch(spec)).resolves.toMatchObject({ target: '%4' });
    expect(calls.filter((call) => call.args.includes('has-session'))).toHaveLength(2);
  });

  it('escapes the cwd for formats and a trailing ";", and runs a one-element argv through the loader', async () => {
    const { exec, calls } = server();
    const runner = new TmuxRunner({ exec });
    await expect(
      runner.launch({ name: 'x', argv: ['/tmp/a;'], cwd: '/does/not/exist', env: {} }),
    ).rejects.toThrow(/ENOENT/);
    expect(calls).toHaveLength(0);
    const base = await mkdtemp(join(tmpdir(), 'engine-unit-#(x)-'));
    const cwd = join(base, 'd;');
    await mkdir(cwd);
    try {
      await runner.launch({ name: 'x', argv: ['run;'], cwd, env: {} });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
    const args = calls.find((call) => call.args.includes('new-window'))?.args ?? [];
    expect(args[args.indexOf('-c') + 1]).toBe(`${base.replaceAll('#', '##')}/d\\;`);
    expect(args.slice(args.indexOf('--'))).toEqual([
      '--',
      '/bin/sh',
      '-c',
      ENV_LOADER,
      'engine-env',
      envFileOf(args),
      'run\\;',
    ]);
  });

  it('runs launches at once, lists the windows once, and never repeats a window name', async () => {
    const names: string[] = [];
    const { exec, calls } = fakeExec((args) => {
      if (args.includes('has-session')) return '';
      if (args.includes('list-windows')) return names.map((name) => `${name}\n`).join('');
      if (args.includes('new-window')) {
        names.push(args[args.indexOf('-n') + 1] ?? '?');
        return `${names.length} %${names.length}\n`;
      }
      return { fail: 'unexpected' };
    });
    const runner = new TmuxRunner({ exec });
    const launched = await Promise.all([
      runner.launch(spec),
      runner.launch(spec),
      runner.launch(spec),
    ]);
    expect(launched.map((agent) => agent.windowName).sort()).toEqual([
      'agent-fix-1',
      'agent-fix-1-2',
      'agent-fix-1-3',
    ]);
    const later = await runner.launch(spec);
    expect(later.windowName).toBe('agent-fix-1-4');
    expect(calls.filter((call) => call.args.includes('list-windows'))).toHaveLength(1);
  });

  it('isTargetAlive: listed and not dead; dead, missing or no server = false', async () => {
    const runner = new TmuxRunner({ exec: server().exec });
    expect(await runner.isTargetAlive('%17')).toBe(true);
    expect(await runner.isTargetAlive('%18')).toBe(false);
    expect(await runner.isTargetAlive('%99')).toBe(false);
    for (const message of [
      'no server running on /tmp/tmux-0/x',
      'error connecting to /tmp/tmux-0/x (No such file or directory)',
      'server exited unexpectedly',
    ]) {
      const gone = new TmuxRunner({ exec: fakeExec(() => ({ fail: message })).exec });
      expect(await gone.isTargetAlive('%1')).toBe(false);
      await expect(gone.stop('%1')).resolves.toBeUndefined();
    }
  });

  it('reports other tmux failures instead of guessing', async () => {
    const runner = new TmuxRunner({ exec: fakeExec(() => ({ fail: 'something odd' })).exec });
    await expect(runner.isTargetAlive('%1')).rejects.toThrow(TmuxError);
    await expect(runner.isTargetAlive('%1')).rejects.toThrow(/list-panes failed: something odd/);
  });

  it('stop: kill-window -t <pane id>; a pane that is gone is ignored', async () => {
    const { exec, calls } = server();
    const runner = new TmuxRunner({ socket: 's', exec });
    await runner.stop('%17');
    expect(calls[0]?.args).toEqual(['-L', 's', 'kill-window', '-t', '%17']);
    const gone = fakeExec((args) =>
      args.includes('kill-window') ? { fail: "can't find pane: %5" } : '%1 0\n',
    );
    await expect(new TmuxRunner({ exec: gone.exec }).stop('%5')).resolves.toBeUndefined();
    const stuck = fakeExec((args) =>
      args.includes('kill-window') ? { fail: 'permission denied' } : '%5 0\n',
    );
    await expect(new TmuxRunner({ exec: stuck.exec }).stop('%5')).rejects.toThrow(TmuxError);
  });

  it('says so when tmux is not installed', async () => {
    const runner = new TmuxRunner({ exec: fakeExec(() => ({ errno: 'ENOENT' })).exec });
    await expect(runner.launch(spec)).rejects.toThrow(/tmux is not installed/);
    await expect(runner.isTargetAlive('%1')).rejects.toThrow(EngineError);
  });

  it('rejects bad socket or session names and non-pane targets', async () => {
    expect(() => new TmuxRunner({ socket: '../x' })).toThrow(EngineError);
    expect(() => new TmuxRunner({ socket: '' })).toThrow(EngineError);
    expect(() => new TmuxRunner({ session: 'a:b' })).toThrow(EngineError);
    expect(() => new TmuxRunner({ session: 'a.b' })).toThrow(EngineError);
    const runner = new TmuxRunner({ exec: server().exec });
    await expect(runner.stop('pty:12')).rejects.toThrow(/not a tmux pane id/);
    await expect(runner.isTargetAlive('=dispatch:1')).rejects.toThrow(/not a tmux pane id/);
  });
});

describe('TmuxRunner.typeInto', () => {
  it('types keys by name into the pane asked, a repeated key in one call', async () => {
    const { exec, calls } = fakeExec((args) =>
      args.includes('list-panes')
        ? '%17 0\n'
        : args.includes('send-keys')
          ? ''
          : { fail: 'unexpected' },
    );
    const runner = new TmuxRunner({ socket: 'sock', exec });
    const typed = await runner.typeInto('%17', [{ key: 'C-c' }, { key: 'C-c', repeat: 2 }]);
    expect(typed).toBe(true);
    expect(calls.filter((c) => c.args.includes('send-keys')).map((c) => c.args)).toEqual([
      ['-L', 'sock', 'send-keys', '-t', '%17', 'C-c'],
      ['-L', 'sock', 'send-keys', '-t', '%17', 'C-c', 'C-c'],
    ]);
  });

  it('asks mayType right before each input, and types nothing more once it says no', async () => {
    const { exec, calls } = fakeExec((args) =>
      args.includes('list-panes')
        ? '%17 0\n'
        : args.includes('send-keys')
          ? ''
          : { fail: 'unexpected' },
    );
    const runner = new TmuxRunner({ exec });
    const answers = [true, false];
    const typed = await runner.typeInto(
      '%17',
      [{ key: 'C-c' }, { key: 'C-c' }, { key: 'C-c' }],
      () => Promise.resolve(answers.shift() ?? true),
    );
    expect(typed).toBe(false);
    expect(calls.filter((c) => c.args.includes('send-keys'))).toHaveLength(1);
  });

  it('types nothing into a pane that is gone', async () => {
    const { exec, calls } = fakeExec((args) =>
      args.includes('list-panes') ? '%1 0\n' : { fail: 'unexpected' },
    );
    const runner = new TmuxRunner({ exec });
    expect(await runner.typeInto('%17', [{ key: 'C-c' }])).toBe(false);
    expect(calls.some((c) => c.args.includes('send-keys'))).toBe(false);
  });

  it('refuses a target that is not a pane id', async () => {
    const runner = new TmuxRunner({ exec: fakeExec(() => '').exec });
    await expect(runner.typeInto('dispatch:1', [{ key: 'C-c' }])).rejects.toThrow(EngineError);
  });
});
