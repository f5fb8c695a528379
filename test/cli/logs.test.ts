/**
 * `engine logs`: a transcript as text (an interactive agent's screen, a claude-print run's
 * conversation), `--raw` as the bytes, `--follow` in both; and a terminal it prints into is left
 * as it was (a real tmux on an isolated socket: no alternate screen, no mouse tracking, the cursor
 * shown, nothing typed at the shell's prompt).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readProcessIdentity } from '../../src/process/process-identity.js';
import { craftedState } from '../helpers/crafted-state.js';
import { shellQuote, TEST_TAGS_MD } from '../helpers/daemon-harness.js';
import { CLI } from '../helpers/run-cli.js';
import { HOSTILE_LOG, PRINT_LOG, PRINT_TEXT } from '../helpers/transcripts.js';
import { waitFor } from '../helpers/wait-for.js';
import { Children } from '../process/spawned.js';
import { destroyServer, testSocketName, tmux } from '../runners/support.js';
import { engine, makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;
const children = new Children();

beforeEach(async () => {
  t = await makeTempDir('engine-logs-');
  await mkdir(t.path('directives'));
  await writeFile(t.path('directives', 'TAGS.md'), TEST_TAGS_MD);
});
afterEach(async () => {
  children.killAll();
  await t.cleanup();
});

/** A finished session of `agent` whose agent.log holds `log`; its directory. */
async function session(
  agent: string,
  log: string | Buffer,
  over: Record<string, unknown> = {},
): Promise<string> {
  const ref = `sessions/2026_11_22_080000_FIX_r_${agent}`;
  const dir = t.path(ref);
  await mkdir(dir, { recursive: true });
  const state = craftedState(t.dir, t.path('R.md'), ref, { status: 'exited', agent, ...over });
  await writeFile(join(dir, '.state.json'), JSON.stringify(state));
  await writeFile(join(dir, 'agent.log'), log);
  return dir;
}

describe('engine logs', () => {
  it('prints an interactive transcript as the text its screen showed, with no escape sequence', async () => {
    const dir = await session('claude', HOSTILE_LOG);
    const result = await engine(t.dir, ['logs', dir]);
    expect({ code: result.code, stderr: result.stderr, stdout: result.stdout }).toEqual({
      code: 0,
      stderr: '',
      stdout: 'wrapper: starting the agent\nAgent TUI\n\n    Working on it\n',
    });
    expect(result.stdout).not.toContain('\u001b');
  });

  it('--raw prints the bytes of agent.log as they are', async () => {
    const dir = await session('claude', HOSTILE_LOG);
    const result = await engine(t.dir, ['logs', '--raw', dir]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: HOSTILE_LOG });
  });

  it("prints a claude-print run's conversation (a real stream-json transcript)", async () => {
    const dir = await session('claude-print', PRINT_LOG);
    const result = await engine(t.dir, ['logs', dir]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({
      code: 0,
      stdout: `${PRINT_TEXT.join('\n')}\n`,
    });
  });

  it.each([
    ['claude', HOSTILE_LOG.slice(0, 60), HOSTILE_LOG.slice(60), 'wrapper: starting the agent'],
    ['claude-print', PRINT_LOG.subarray(0, 4000), PRINT_LOG.subarray(4000), PRINT_TEXT[0]!],
  ])(
    '--follow (%s) prints what settles as the log grows and the rest when the session ends',
    async (agent, first, rest, early) => {
      // The session's wrapper: alive until the test kills it.
      const wrapper = children.spawn('sleep', ['600']);
      const identity = readProcessIdentity(wrapper.pid!)!;
      const running = { status: 'running', pid: wrapper.pid, startTicks: identity.startTicks };
      const dir = await session(agent, first, { ...running, bootId: identity.bootId });
      const follow = children.track(
        spawn(process.execPath, [CLI, 'logs', '--follow', dir], {
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      let out = '';
      let code: number | null | undefined;
      follow.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      follow.on('exit', (exitCode) => (code = exitCode));
      await waitFor(() => out.includes(`${early}\n`), { message: () => `early text; got ${out}` });

      await appendFile(join(dir, 'agent.log'), rest);
      // A full-screen program's screen is printed when the session ends, not before.
      if (agent === 'claude') expect(out).not.toContain('Agent TUI');
      expect(code).toBeUndefined();
      wrapper.kill('SIGKILL');
      await waitFor(() => code !== undefined, { message: () => `the follow to end; got ${out}` });
      const whole = await engine(t.dir, ['logs', dir]);
      expect({ code, out }).toEqual({ code: 0, out: whole.stdout });
    },
  );
});

describe('engine logs in a terminal (tmux)', () => {
  let socket: string;
  beforeEach(() => {
    socket = testSocketName();
  });
  afterEach(() => destroyServer(socket));

  /**
   * Runs `engine logs <args>` at a shell's prompt in a tmux pane, then types a command at the
   * next prompt: what the terminal shows and the line the shell ran.
   */
  async function inPane(args: string[]): Promise<{ flags: string; line: string }> {
    const done = t.path('done');
    await tmux(
      socket,
      ...['-f', '/dev/null', 'new-session', '-d', '-s', 'logs', '-x', '120', '-y', '30'],
      // In the test's directory: what the terminal types at the prompt may be run (`>84`).
      ...['-c', t.dir],
      `env PS1='$ ' sh`,
    );
    const command = [process.execPath, CLI, 'logs', ...args].map(shellQuote).join(' ');
    await tmux(socket, 'send-keys', '-t', 'logs', '-l', `${command}; touch ${shellQuote(done)}`);
    await tmux(socket, 'send-keys', '-t', 'logs', 'Enter');
    await waitFor(() => existsSync(done), { message: 'engine logs to end in the pane' });
    const lastLine = async () =>
      (await tmux(socket, 'capture-pane', '-p', '-t', 'logs')).trimEnd().split('\n').at(-1);
    // (after what the terminal typed, if anything: its answers are echoed before the prompt)
    await waitFor(async () => (await lastLine())?.endsWith('$'), { message: 'the next prompt' });
    // Whatever the terminal answered the transcript's queries with is typed before this.
    await tmux(socket, 'send-keys', '-t', 'logs', '-l', 'echo typed-here');
    await tmux(socket, 'send-keys', '-t', 'logs', 'Enter');
    const screen = await waitFor(
      async () => {
        const text = await tmux(socket, 'capture-pane', '-p', '-t', 'logs');
        return /typed-here\n(.*\n)*\$ *\n/.test(text) && text;
      },
      { message: 'the typed command to run' },
    );
    const flags = await tmux(
      socket,
      ...['display-message', '-p', '-t', 'logs'],
      '#{alternate_on} #{mouse_any_flag} #{cursor_flag}',
    );
    const line = screen.split('\n').find((l) => l.includes('typed-here')) ?? '';
    return { flags: flags.trim(), line };
  }

  it('leaves the terminal as it was: no alternate screen, no mouse, the cursor shown, nothing typed', async () => {
    const dir = await session('claude', HOSTILE_LOG);
    const { flags, line } = await inPane([dir]);
    expect({ flags, line }).toEqual({ flags: '0 0 1', line: '$ echo typed-here' });
  });

  it('(the transcript does upset a terminal: what --raw leaves)', async () => {
    const dir = await session('claude', HOSTILE_LOG);
    const { flags, line } = await inPane(['--raw', dir]);
    expect(flags).toBe('1 1 0');
    expect(line).not.toBe('$ echo typed-here');
  });
});
