/**
 * TmuxRunner on a real tmux server. Every server here is isolated (`tmux -L engine-test-<random>`)
 * and destroyed in afterAll, socket file included; every process started is killed by pid.
 */
import { existsSync, readFileSync } from 'node:fs';
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  realpath,
  rm,
  writeFile,
} from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/errors.js';
import { TmuxRunner, isTmuxAvailable } from '../../src/runners/tmux-runner.js';
import type { LaunchedAgent } from '../../src/runners/runner.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  destroyServer,
  killAll,
  processGone,
  readProbe,
  socketFile,
  testSocketName,
  tmux,
  tmuxStatus,
  writeProbeAgent,
  type ProbeReport,
} from './support.js';

const available = await isTmuxAvailable();
const execFileAsync = promisify(execFile);

/**
 * Canary prefix: a shell or a tmux `#()` job that interpreted a hostile string would create
 * `<dir>/canary-<name>`. It is an environment variable (inherited by the tmux server, and given to
 * every agent) so that the hostile strings themselves need no `/` and can also be directory names.
 */
const CANARY_VAR = 'ENGINE_TEST_CANARY';

/**
 * Opens a window in `session` whose `-c` is `cwd` as given (unescaped), and waits until the job a
 * `#()` in it runs has made `canary`. The window outlives the job: one that ended at once could
 * end the session, and with it the server, which kills the job before it ran (seen under load).
 * Another window asks again (up to three more) when the canary has not shown within 5 s: in one full `npm test` on 2
 * cores it did not show within 20 s of one window (why is not known; the fact held alone, and in
 * the other runs). Each expansion in a later second starts the job anew.
 */
async function waitForFormatJob(
  socket: string,
  session: string,
  cwd: string,
  canary: string,
): Promise<void> {
  const format = ['-P', '-F', '#{pane_id}'];
  const open = async (): Promise<string> =>
    (
      await tmux(
        socket,
        'new-window',
        '-d',
        ...format,
        '-t',
        session,
        '-c',
        cwd,
        '--',
        'sleep',
        '600',
      )
    ).trim();
  const panes = [await open()];
  for (let attempt = 1; !existsSync(canary); attempt++) {
    const last = attempt === 4;
    await waitFor(() => existsSync(canary), {
      message: `the format job's ${canary}`,
      timeoutMs: last ? 20_000 : 5_000,
    }).catch((error: unknown) => {
      if (last) throw error;
    });
    if (!existsSync(canary)) panes.push(await open());
  }
  for (const pane of panes) await tmux(socket, 'kill-pane', '-t', pane);
}
/** Strings that are dangerous to a shell or to tmux; each must arrive as exactly itself. */
function hostileArguments(): string[] {
  const c = `\${${CANARY_VAR}}`;
  return [
    `$(touch ${c}argv-subst)`,
    `; touch ${c}argv-semicolon`,
    `\`touch ${c}argv-backtick\``,
    `| touch ${c}argv-pipe`,
    `&& touch ${c}argv-and`,
    `#(touch ${c}argv-format-job)`,
    '$(touch x).md',
    'a; rm -rf b.md',
    'x;',
    ';',
    ';;',
    '\\;',
    'ends-with-backslash\\',
    '#{pane_id}',
    '##',
    "it's",
    '"double" quotes',
    'new\nline',
    '-e',
    '--',
    '-n',
    '',
    ' ',
    '~',
    '$HOME',
    '*',
    '{}',
    '%1',
    'tab\there',
    'ünïcödé',
  ];
}

describe.skipIf(!available)('TmuxRunner on a real tmux server', () => {
  const socket = testSocketName();
  const sockets = [socket];
  const pids = new Set<number>();
  let dir: string;
  let probe: string;
  let runner: TmuxRunner;
  let counter = 0;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'engine-runner-')));
    probe = writeProbeAgent(dir);
    process.env[CANARY_VAR] = join(dir, 'canary-');
    runner = new TmuxRunner({ socket });
  });

  afterAll(async () => {
    for (const name of sockets) await destroyServer(name);
    killAll(pids);
    if (dir) await rm(dir, { recursive: true, force: true });
    for (const name of sockets) {
      expect(existsSync(socketFile(name))).toBe(false);
      expect(existsSync(`${socketFile(name)}.lock`)).toBe(false);
    }
  });

  function outFile(): string {
    counter += 1;
    return join(dir, `report-${counter}.json`);
  }

  async function launch(
    options: { name?: string; args?: string[]; env?: Record<string, string>; cwd?: string } = {},
  ): Promise<{ agent: LaunchedAgent; out: string }> {
    const out = outFile();
    const agent = await runner.launch({
      name: options.name ?? 'agent-test',
      argv: [process.execPath, probe, ...(options.args ?? [])],
      cwd: options.cwd ?? dir,
      env: { [CANARY_VAR]: process.env[CANARY_VAR]!, PROBE_OUT: out, ...options.env },
    });
    pids.add(agent.pid);
    return { agent, out };
  }

  async function report(out: string): Promise<ProbeReport> {
    return waitFor(() => readProbe(out), { message: `report ${out}` });
  }

  async function canaries(): Promise<string[]> {
    return (await readdir(dir)).filter((name) => name.startsWith('canary-'));
  }

  async function windowNames(): Promise<string[]> {
    return (await tmux(socket, 'list-windows', '-t', '=dispatch', '-F', '#{window_name}'))
      .split('\n')
      .filter(Boolean);
  }

  it('creates the session detached when it is missing', async () => {
    expect((await tmuxStatus(socket, 'has-session', '-t', '=dispatch')).ok).toBe(false);
    await runner.ensureSession();
    const sessions = await tmux(
      socket,
      'list-sessions',
      '-F',
      '#{session_name} #{session_attached}',
    );
    expect(sessions.trim()).toBe('dispatch 0');
    // Idempotent: a second call finds it.
    await runner.ensureSession();
    expect((await tmux(socket, 'list-sessions', '-F', '#{session_name}')).trim()).toBe('dispatch');
  });

  it('creates the session once when two runners race to create it', async () => {
    const fresh = testSocketName();
    sockets.push(fresh);
    const a = new TmuxRunner({ socket: fresh, session: 'race' });
    const b = new TmuxRunner({ socket: fresh, session: 'race' });
    const out1 = outFile();
    const out2 = outFile();
    const spec = (out: string) => ({
      name: 'racer',
      argv: [process.execPath, probe],
      cwd: dir,
      env: { PROBE_OUT: out },
    });
    const launched = await Promise.all([a.launch(spec(out1)), b.launch(spec(out2))]);
    for (const agent of launched) pids.add(agent.pid);
    expect((await report(out1)).pid).toBe(launched[0].pid);
    expect((await report(out2)).pid).toBe(launched[1].pid);
    expect((await tmux(fresh, 'list-sessions', '-F', '#{session_name}')).trim()).toBe('race');
  });

  it('runs the argv in the cwd with the env vars, as the pane process itself', async () => {
    const work = join(dir, 'work dir');
    await mkdir(work);
    const { agent, out } = await launch({
      args: ['first', 'second arg'],
      cwd: work,
      env: { PROBE_ENV: 'FOO,BAR,TMUX_PANE', FOO: 'foo value', BAR: '', PROBE_FOREVER: '1' },
    });
    const seen = await report(out);
    expect(seen.argv).toEqual(['first', 'second arg']);
    expect(seen.cwd).toBe(work);
    expect(seen.env.FOO).toBe('foo value');
    expect(seen.env.BAR).toBe('');
    expect(agent.kind).toBe('tmux');
    expect(agent.target).toMatch(/^%\d+$/);
    // The command is exec'd directly: the pane's pid is the agent's own pid.
    expect(seen.pid).toBe(agent.pid);
    const panePid = await tmux(socket, 'display-message', '-p', '-t', agent.target, '#{pane_pid}');
    expect(Number(panePid.trim())).toBe(agent.pid);
    // tmux, not the daemon, sets TMUX_PANE: it names the agent's own pane.
    expect(seen.env.TMUX_PANE).toBe(agent.target);
    await runner.stop(agent.target);
  });

  it('names windows from [A-Za-z0-9._-] and suffixes -2, -3 on collision', async () => {
    const base = `agent-implementation-${Date.now()}`;
    const first = await launch({ name: base, env: { PROBE_FOREVER: '1' } });
    const second = await launch({ name: base, env: { PROBE_FOREVER: '1' } });
    const third = await launch({ name: base, env: { PROBE_FOREVER: '1' } });
    const odd = await launch({ name: 'agent x/y#{z};$(q) ü.1', env: { PROBE_FOREVER: '1' } });
    expect([first, second, third, odd].map(({ agent }) => agent.windowName)).toEqual([
      base,
      `${base}-2`,
      `${base}-3`,
      'agentxyzq.1',
    ]);
    const names = await windowNames();
    expect(names).toEqual(expect.arrayContaining([base, `${base}-2`, `${base}-3`, 'agentxyzq.1']));
    const byPane = await tmux(
      socket,
      'display-message',
      '-p',
      '-t',
      second.agent.target,
      '#{window_name}',
    );
    expect(byPane.trim()).toBe(`${base}-2`);
    for (const { agent } of [first, second, third, odd]) await runner.stop(agent.target);
  });

  it("writes the agent's output to logFile from its very first byte, whatever the file is named", async () => {
    const c = `\${${CANARY_VAR}}`;
    const names = ['agent #{pane_id} ##(x).log', `it's $(touch ${c}log-subst) \`x\`.log`, 'ends;'];
    for (const [i, name] of names.entries()) {
      const logFile = join(dir, name);
      // Prints at once, before any second tmux call could have set a pipe, then stays.
      const agent = await runner.launch({
        name: 'logged',
        argv: ['/bin/sh', '-c', 'echo "first line $0"; exec sleep 60', String(i)],
        cwd: dir,
        env: {},
        logFile,
      });
      pids.add(agent.pid);
      const text = await waitFor(
        () =>
          existsSync(logFile) &&
          readFileSync(logFile, 'utf8').includes('\n') &&
          readFileSync(logFile, 'utf8'),
        { message: `the first line in ${logFile}` },
      );
      expect(text.startsWith(`first line ${i}\r\n`)).toBe(true);
      // The respawned pane's process is the one reported.
      const panePid = await tmux(
        socket,
        'display-message',
        '-p',
        '-t',
        agent.target,
        '#{pane_pid}',
      );
      expect(Number(panePid.trim())).toBe(agent.pid);
      await runner.stop(agent.target);
    }
    expect(await canaries()).toEqual([]);
  });

  it('gives the agent the PATH it is launched with, with or without a logFile', async () => {
    // tmux gives a new pane its client's PATH; the agent gets the one it is launched with.
    const path = `${join(dir, 'agent-bin')}:${process.env.PATH ?? ''}`;
    for (const logFile of [undefined, join(dir, 'path.log')]) {
      const out = outFile();
      const agent = await runner.launch({
        name: 'path',
        argv: [process.execPath, probe],
        cwd: dir,
        env: { PROBE_OUT: out, PROBE_ENV: 'PATH', PATH: path },
        logFile,
      });
      pids.add(agent.pid);
      const seen = await report(out);
      expect(seen.env.PATH).toBe(path);
      expect(seen.pid).toBe(agent.pid);
    }
  });

  it("gives the agent exactly its launch environment, never the server's, with or without a logFile", async () => {
    // A server that started long ago, with values that are stale now.
    const stale = testSocketName();
    sockets.push(stale);
    await execFileAsync(
      'tmux',
      ['-L', stale, '-f', '/dev/null', 'new-session', '-d', '-s', 'dispatch'],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          VAR: 'old',
          STALE: '1',
          [CANARY_VAR]: process.env[CANARY_VAR],
        },
      },
    );
    const calls: string[][] = [];
    const recording = new TmuxRunner({
      socket: stale,
      exec: async (file, args, options) => {
        calls.push([...args]);
        return execFileAsync(file, [...args], { env: options.env, encoding: 'utf8' });
      },
    });
    const c = `\${${CANARY_VAR}}`;
    const secret = `s3cret\n'"; $(touch ${c}env-secret) \`touch ${c}env-tick\` #(touch ${c}env-job) ü;`;
    for (const logFile of [undefined, join(dir, 'stale-env.log')]) {
      const out = outFile();
      const env = {
        [CANARY_VAR]: process.env[CANARY_VAR]!,
        PATH: process.env.PATH!,
        VAR: 'new',
        FOO: 'x',
        SECRET: secret,
        TERM: 'the-daemons-terminal',
        'not-a-name': 'y',
        PROBE_OUT: out,
        PROBE_ENV: '*',
      };
      const agent = await recording.launch({
        name: 'env',
        argv: [process.execPath, probe],
        cwd: dir,
        env,
        logFile,
      });
      pids.add(agent.pid);
      const seen = await report(out);
      const handed: Record<string, string> = { ...env };
      delete handed.TERM;
      delete handed['not-a-name'];
      expect(seen.env).toEqual({
        ...handed,
        // What tmux sets for the pane itself: its terminal and its id.
        TERM: await tmux(stale, 'show-options', '-gv', 'default-terminal').then((v) => v.trim()),
        TERM_PROGRAM: 'tmux',
        TERM_PROGRAM_VERSION: expect.any(String),
        TMUX: expect.stringContaining(stale),
        TMUX_PANE: agent.target,
        PWD: dir,
      });
      // Every step of the hand-over execs: the pane's pid is the agent's.
      expect(seen.pid).toBe(agent.pid);
    }
    // No value was in a tmux argv; the environment files are gone once the agents started.
    expect(calls.flat().join('\n')).not.toContain('s3cret');
    const files = calls.flatMap((args) => args.filter((arg) => arg.includes('engine-env-')));
    expect(files).toHaveLength(2);
    for (const file of files) expect(existsSync(file)).toBe(false);
    expect(await canaries()).toEqual([]);
  });

  it('reports a target alive while it runs and dead once it exits', async () => {
    const release = join(dir, `release-${Date.now()}`);
    const { agent, out } = await launch({ env: { PROBE_HOLD: release } });
    await report(out);
    expect(await runner.isTargetAlive(agent.target)).toBe(true);
    expect(processGone(agent.pid)).toBe(false);
    await writeFile(release, '');
    // tmux 3.3a may keep the exited pane (pane_dead=1, a zombie pid) for seconds: poll.
    await waitFor(async () => !(await runner.isTargetAlive(agent.target)), {
      timeoutMs: 30_000,
      message: 'the target to be reported dead',
    });
    await waitFor(() => processGone(agent.pid), {
      timeoutMs: 30_000,
      message: 'the agent to exit',
    });
  });

  it('reports a dead pane as dead when the server keeps it (remain-on-exit)', async () => {
    const keeper = testSocketName();
    sockets.push(keeper);
    const kept = new TmuxRunner({ socket: keeper });
    await kept.ensureSession();
    await tmux(keeper, 'set-option', '-g', 'remain-on-exit', 'on');
    const out = outFile();
    const agent = await kept.launch({
      name: 'kept',
      argv: [process.execPath, probe],
      cwd: dir,
      env: { PROBE_OUT: out },
    });
    pids.add(agent.pid);
    await report(out);
    await waitFor(
      async () =>
        (await tmux(keeper, 'display-message', '-p', '-t', agent.target, '#{pane_dead}')).trim() ===
        '1',
      { timeoutMs: 30_000, message: 'the pane to be dead' },
    );
    expect(await kept.isTargetAlive(agent.target)).toBe(false);
    await kept.stop(agent.target);
    const panes = await tmux(keeper, 'list-panes', '-a', '-F', '#{pane_id}');
    expect(panes.split('\n')).not.toContain(agent.target);
  });

  it('stops a running target, and ignores one that is gone', async () => {
    const { agent, out } = await launch({ env: { PROBE_FOREVER: '1' } });
    await report(out);
    expect(await runner.isTargetAlive(agent.target)).toBe(true);
    await runner.stop(agent.target);
    expect(await runner.isTargetAlive(agent.target)).toBe(false);
    await waitFor(() => processGone(agent.pid), {
      timeoutMs: 30_000,
      message: 'the agent to exit',
    });
    await runner.stop(agent.target);
    await runner.stop('%999999');
    expect(await runner.isTargetAlive('%999999')).toBe(false);
  });

  it('answers "not alive" and stops nothing when there is no server, without starting one', async () => {
    const none = testSocketName();
    sockets.push(none);
    const idle = new TmuxRunner({ socket: none });
    expect(await idle.isTargetAlive('%1')).toBe(false);
    await idle.stop('%1');
    await idle.close();
    expect(existsSync(socketFile(none))).toBe(false);
  });

  it('rejects a target that is not a pane id', async () => {
    await expect(runner.isTargetAlive('pty:1')).rejects.toThrow(EngineError);
    await expect(runner.stop('dispatch:1; kill-server')).rejects.toThrow(/not a tmux pane id/);
  });

  it('passes hostile arguments, env values and cwd through with no shell and no tmux parsing', async () => {
    const c = `\${${CANARY_VAR}}`;
    const cwd = join(dir, `cwd #(touch ${c}cwd-job) $(touch ${c}cwd-subst); 'q' ~ #{pane_id};`);
    await mkdir(cwd);
    const hostile = hostileArguments();
    const envValues = {
      HOSTILE_A: `$(touch ${c}env-subst)`,
      HOSTILE_B: `#(touch ${c}env-job)`,
      HOSTILE_C: 'ends with;',
      HOSTILE_D: '#{pane_id}',
    };
    const { agent, out } = await launch({
      args: hostile,
      cwd,
      env: { ...envValues, PROBE_ENV: Object.keys(envValues).join(',') },
    });
    const seen = await report(out);
    expect(seen.argv).toEqual(hostile);
    expect(seen.cwd).toBe(cwd);
    expect(seen.env).toEqual(envValues);
    expect(seen.pid).toBe(agent.pid);

    // Control: the same kind of `#()` in an UNESCAPED -c does run a job. Once its canary shows up,
    // any job our launch had caused would have run as well.
    const control = join(dir, `control #(touch ${c}control)`);
    await mkdir(control);
    await waitForFormatJob(socket, '=dispatch:', control, join(dir, 'canary-control'));
    expect(await canaries()).toEqual(['canary-control']);
    await rm(join(dir, 'canary-control'));
  });

  it('runs a one-element argv (a hostile file name) without a shell and keeps its pid', async () => {
    const c = `\${${CANARY_VAR}}`;
    const script = join(dir, `run $(touch ${c}single) ; touch ${c}single2 #{pane_id};`);
    await copyFile(probe, script);
    await chmod(script, 0o755);
    const out = outFile();
    const agent = await runner.launch({
      name: 'single',
      argv: [script],
      cwd: dir,
      env: { PROBE_OUT: out },
    });
    pids.add(agent.pid);
    const seen = await report(out);
    expect(seen.argv).toEqual([]);
    expect(seen.pid).toBe(agent.pid);
    expect(await canaries()).toEqual([]);
  });

  it('runs a one-element argv that starts with a dash as a program name, not an option', async () => {
    // Nothing is named "-x": the window dies at once (exec fails) and nothing else is run.
    const agent = await runner.launch({ name: 'dash', argv: ['-x'], cwd: dir, env: {} });
    pids.add(agent.pid);
    await waitFor(async () => !(await runner.isTargetAlive(agent.target)), {
      timeoutMs: 30_000,
      message: 'the failed exec to end the pane',
    });
  });

  it('refuses an empty argv, a missing cwd, a NUL in a value; reports a too-long command clearly', async () => {
    const spec = { name: 'x', argv: [process.execPath, probe], cwd: dir, env: {} };
    await expect(runner.launch({ ...spec, argv: [] })).rejects.toThrow(/command is empty/);
    await expect(runner.launch({ ...spec, argv: [''] })).rejects.toThrow(/command is empty/);
    await expect(runner.launch({ ...spec, cwd: join(dir, 'missing') })).rejects.toThrow(/ENOENT/);
    await expect(runner.launch({ ...spec, env: { A: 'b\0c' } })).rejects.toThrow(/NUL byte/);
    await expect(
      runner.launch({ ...spec, argv: [...spec.argv, 'x'.repeat(20_000)] }),
    ).rejects.toThrow(/16 KB/);
  });
});

/**
 * What this machine's tmux does with the arguments of new-window, shown with raw tmux calls: the
 * reasons for paneCommand, escapeTmuxArgument and escapeTmuxFormat.
 */
describe.skipIf(!available)('tmux argument handling (the facts the runner relies on)', () => {
  const socket = testSocketName();
  let dir: string;
  let probe: string;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'engine-tmux-facts-')));
    probe = writeProbeAgent(dir);
    process.env[CANARY_VAR] = join(dir, 'canary-');
    await tmux(
      socket,
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      'facts',
      '-x',
      '200',
      '-y',
      '50',
    );
  });

  afterAll(async () => {
    await destroyServer(socket);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const c = `\${${CANARY_VAR}}`;
  /** Where `new-window` goes and what it runs: the probe agent, reporting to `out`. */
  const probeWindow = (out: string) => [
    '-t',
    '=facts:',
    '-e',
    `PROBE_OUT=${out}`,
    '--',
    process.execPath,
    probe,
  ];

  it('runs a ONE-argument command through a shell', async () => {
    await tmux(socket, 'new-window', '-d', '-t', '=facts:', '--', `touch ${c}one-arg`);
    await waitFor(() => existsSync(join(dir, 'canary-one-arg')), { message: 'the shell canary' });
  });

  it('execs a command of SEVERAL arguments directly (pane_pid is its pid)', async () => {
    const out = join(dir, 'direct.json');
    const printed = await tmux(
      socket,
      'new-window',
      '-d',
      '-P',
      '-F',
      '#{pane_pid}',
      ...probeWindow(out),
      `$(touch ${c}several)`,
    );
    const seen = await waitFor(() => readProbe(out), { message: 'the direct report' });
    expect(seen.argv).toEqual([`$(touch ${c}several)`]);
    expect(seen.pid).toBe(Number(printed.trim()));
    expect(existsSync(join(dir, 'canary-several'))).toBe(false);
  });

  it('ends the tmux command at an argument ending in ";" unless written "\\;"', async () => {
    // Unescaped: `x;` ends new-window and `run-shell ...` becomes a second tmux command.
    const out = join(dir, 'split.json');
    await tmux(
      socket,
      'new-window',
      '-d',
      ...probeWindow(out),
      'x;',
      'run-shell',
      `touch ${c}split`,
    );
    await waitFor(() => existsSync(join(dir, 'canary-split')), { message: 'the run-shell canary' });
    expect((await waitFor(() => readProbe(out), { message: 'the split report' })).argv).toEqual([
      'x',
    ]);
    // Escaped: one command, the argument intact.
    const out2 = join(dir, 'escaped.json');
    await tmux(
      socket,
      'new-window',
      '-d',
      ...probeWindow(out2),
      'x\\;',
      'run-shell',
      `touch ${c}escaped`,
    );
    const seen = await waitFor(() => readProbe(out2), { message: 'the escaped report' });
    expect(seen.argv).toEqual(['x;', 'run-shell', `touch ${c}escaped`]);
    expect(existsSync(join(dir, 'canary-escaped'))).toBe(false);
  });

  it('expands formats in the -c directory ("#(cmd)" runs a shell command), not in -e or argv', async () => {
    const cwd = join(dir, `d #(touch ${c}cwd)`);
    await mkdir(cwd);
    await waitForFormatJob(socket, '=facts:', cwd, join(dir, 'canary-cwd'));
  });
});
