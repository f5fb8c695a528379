/**
 * `engine run --monitor-tags` with the default `claude` profile: interactive Claude Code in a tmux
 * window (the harness's own `tmux -L` server), its Messages API the stand-in scripting the agent's
 * `engine tag swap`. The item reaches #done-fix; the agent stays open for --close-after-done, is
 * then asked to exit and exits on its own; its transcript stays; a daemon restarted meanwhile
 * still closes it. An agent that asks for permission after marking done is never typed into: the
 * close ends it by signal, and the tool it asked for never runs, even when SIGTERM is ignored.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeBin, useClaudeSandbox } from '../helpers/claude-env.js';
import { shellQuote } from '../helpers/daemon-harness.js';
import {
  events,
  isAlive,
  tagsOf,
  stateOf,
  useDaemonHarness,
  waitForReady,
  waitForState,
  waitForTag,
  type StateRecord,
} from '../helpers/daemon-harness.js';
import { contentText, lastUserContent, reply } from '../helpers/messages-api.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

// Registered before the daemon harness: after-hooks run in reverse order (vitest's "stack"), so
// the harness ends daemon and agents before the stand-in and the sandbox go (an agent that
// outlived them wrote its transcript into a sandbox already removed).
const claude = useClaudeSandbox();
const h = useDaemonHarness();

const REQUEST = '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n';
/** --close-after-done in minutes: 6 s, long enough to see the agent still open after done. */
const CLOSE_AFTER_MIN = 0.1;
const CLOSE_AFTER_MS = CLOSE_AFTER_MIN * 60_000;
/** File times come from the kernel's coarse clock (a tick behind the one the daemon reads). */
const MTIME_SLACK_MS = 50;

const start = (bin = claudeBin(), closeAfterMin = CLOSE_AFTER_MIN) =>
  h.start(
    ['--agent', 'claude', '--claude-bin', bin, '--close-after-done', String(closeAfterMin)],
    claude.sandbox.env(),
  );

const SWAP = `engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-fix' '#done-fix'`;

async function scriptDoneAndSettle(): Promise<void> {
  claude.api.script(reply.bash(SWAP), reply.text('Marked it done.'));
  await claude.sandbox.settleFirstRun(h.root);
  // Interactive Claude Code runs an unknown slash command nowhere ("Unknown command: /fix", no
  // request is made): the project needs engine init's command for the skill.
  const init = await runCli(['init', '--root', h.root]);
  expect(init.code, init.stderr).toBe(0);
}

/** Waits, longer than --close-after-done and its grace, for the session's exit to be recorded. */
function waitForExited(dir: string, output: () => string): Promise<StateRecord> {
  return waitFor(
    async () => {
      const state = await stateOf(dir);
      return state.status === 'exited' && state;
    },
    { timeoutMs: 40_000, message: () => `the exit of ${dir}; daemon:\n${output().slice(-3000)}` },
  );
}

/** The item at #done-fix (or requeued); on a timeout, what the agent's windows and the daemon show. */
async function waitForEnd(file: string, output: () => string): Promise<string> {
  try {
    return await waitForTag(file, ['#done-fix', '#needs-fix'], 40_000);
  } catch (error) {
    let screens = '';
    try {
      for (const pane of execFileSync(
        'tmux',
        ['-L', h.socket, 'list-panes', '-a', '-F', '#{pane_id}'],
        { encoding: 'utf8' },
      )
        .split('\n')
        .filter(Boolean))
        screens += execFileSync('tmux', ['-L', h.socket, 'capture-pane', '-p', '-t', pane], {
          encoding: 'utf8',
        });
    } catch {
      screens = '(no tmux server)';
    }
    throw new Error(`${String(error)}\nscreens:\n${screens}\ndaemon:\n${output().slice(-3000)}`);
  }
}

/** Whether the tmux pane is still there on the harness's server. */
function paneExists(pane: string): boolean {
  try {
    return execFileSync('tmux', ['-L', h.socket, 'list-panes', '-a', '-F', '#{pane_id}'], {
      encoding: 'utf8',
    })
      .split('\n')
      .includes(pane);
  } catch {
    return false;
  }
}

it('interactive claude marks the item done, stays open for --close-after-done, then exits when asked', async () => {
  await scriptDoneAndSettle();
  const file = await h.request('fix-me.md', REQUEST);

  const d = start();

  const done = await waitForEnd(file, d.output);
  expect(tagsOf(done), `${done}\ndaemon:\n${d.output().slice(-3000)}`).toEqual(['#done-fix']);
  const ref = /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!;
  const dir = join(h.root, ref);
  const running = await waitForState(dir, (s) => s.agentPid !== null);
  expect(running.agent).toBe('claude');
  const pane = (running.tmux as { pane: string }).pane;
  // The prompt reached the CLI as one argument after `--`: engine init's /fix, with the file.
  const [first] = claude.api.messages();
  const prompt = contentText(lastUserContent(first!));
  expect(prompt).toContain('<command-name>/fix</command-name>');
  expect(prompt).toContain(`<command-args>${file}</command-args>`);

  // Done, the interactive agent is still there: a human can read the end of it.
  await waitFor(() => existsSync(join(dir, '.done')), { message: 'the .done mark' });
  expect(isAlive(running.agentPid as number)).toBe(true);
  expect(paneExists(pane)).toBe(true);

  // Asked to exit after --close-after-done, it exits on its own (code 0, not a signal's 143).
  const exited = await waitForExited(dir, d.output);
  expect(exited.exitCode, d.output().slice(-3000)).toBe(0);
  const doneAt = statSync(join(dir, '.done')).mtimeMs;
  const askedAt = statSync(join(dir, '.close-asked')).mtimeMs;
  expect(askedAt - doneAt).toBeGreaterThanOrEqual(CLOSE_AFTER_MS - MTIME_SLACK_MS);
  const closing = events(h.root).filter((e) => e.event === 'agent-closing');
  expect(closing.map((e) => e.step)).toEqual(['ask']);
  await waitFor(() => !paneExists(pane), { message: 'the window to close' });

  const followUp = claude.api.messages()[1];
  expect(lastUserContent(followUp!).find((b) => b.type === 'tool_result')?.is_error).not.toBe(true);

  // The transcript stays: byte for byte with --raw, where the tool call's arguments show (split
  // by cursor moves, depending on the screen); as text, the screen as it was last shown (the UI
  // folds the call into "Ran 1 shell command"), the answer and the resume hint written at exit.
  const raw = await runCli(['logs', '--raw', file, '--root', h.root]);
  expect(raw.code, raw.stderr).toBe(0);
  expect(readFileSync(join(dir, 'agent.log'), 'utf8')).toBe(raw.stdout);
  const esc = '\u001b';
  expect(raw.stdout.replace(new RegExp(`${esc}\\[[0-9;?<>=]*[ -/]*[@-~]`, 'g'), ' ')).toContain(
    `'#done-fix'`,
  );
  const logs = await runCli(['logs', file, '--root', h.root]);
  expect(logs.code, logs.stderr).toBe(0);
  expect(logs.stdout).not.toContain(esc);
  expect(logs.stdout).toContain('\n● Marked it done.\n');
  expect(logs.stdout).toMatch(
    new RegExp(`\nclaude (--settings \\S+ )?--resume ${exited.agentSessionId as string}\n`),
  );
  expect(claude.api.unscripted).toEqual([]);
});

it('a daemon restarted after #done-fix still closes the interactive agent', async () => {
  await scriptDoneAndSettle();
  const file = await h.request('fix-me.md', REQUEST);

  const first = start();
  const done = await waitForEnd(file, first.output);
  expect(tagsOf(done), first.output().slice(-3000)).toEqual(['#done-fix']);
  const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!);
  await waitFor(() => existsSync(join(dir, '.done')), { message: 'the .done mark' });
  expect(await first.stop()).toBe(0);
  expect(existsSync(join(dir, '.close-asked'))).toBe(false);

  const second = start();
  await waitForReady(second);

  const exited = await waitForExited(dir, second.output);
  expect(exited.exitCode, second.output().slice(-3000)).toBe(0);
  expect(
    statSync(join(dir, '.close-asked')).mtimeMs - statSync(join(dir, '.done')).mtimeMs,
  ).toBeGreaterThanOrEqual(CLOSE_AFTER_MS - MTIME_SLACK_MS);
});

describe('an agent that asks for permission after marking done', () => {
  /** 12 s: the Write's permission dialog is up well before the close is due. */
  const CLOSE_AFTER_ASKING_MIN = 0.2;

  /** Scripts done, then a Write the settings do not allow (only Bash): a permission prompt. */
  async function scriptDoneThenWrite(): Promise<string> {
    const written = join(h.root, 'written-after-done.txt');
    claude.api.script(
      reply.bash(SWAP),
      reply.tool('Write', { file_path: written, content: 'approved by nobody\n' }),
    );
    await claude.sandbox.settleFirstRun(h.root);
    const init = await runCli(['init', '--root', h.root]);
    expect(init.code, init.stderr).toBe(0);
    return written;
  }

  /** The session of the item once done, after its agent asked for the Write. */
  async function doneAndAsking(file: string, output: () => string): Promise<string> {
    const done = await waitForEnd(file, output);
    expect(tagsOf(done), output().slice(-3000)).toEqual(['#done-fix']);
    const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!);
    await waitFor(
      () => {
        const state = readFileSync(join(dir, 'agent-state.json'), 'utf8');
        return (JSON.parse(state) as { detail?: string }).detail === 'permission for Write';
      },
      { timeoutMs: 30_000, message: () => `the permission prompt; daemon:\n${output()}` },
    );
    expect(existsSync(join(dir, '.close-asked'))).toBe(false);
    return dir;
  }

  it('is not typed into: SIGTERM ends it when the close is due, and the Write never runs', async () => {
    const written = await scriptDoneThenWrite();
    const file = await h.request('fix-me.md', REQUEST);
    const d = start(claudeBin(), CLOSE_AFTER_ASKING_MIN);
    const dir = await doneAndAsking(file, d.output);

    const exited = await waitForExited(dir, d.output);
    expect(existsSync(written), 'the Write ran').toBe(false);
    // 128 + SIGTERM: Claude Code ends on it, the question unanswered.
    expect(exited.exitCode, d.output().slice(-3000)).toBe(143);
    const closing = events(h.root).filter((e) => e.event === 'agent-closing');
    expect(closing.map((e) => [e.step, e.agentState])).toEqual([['SIGTERM', 'waiting']]);
    expect(existsSync(join(dir, '.close-asked'))).toBe(false);
    // Its second request asked for the Write; none followed with the Write's result.
    expect(claude.api.messages()).toHaveLength(2);
  }, 120_000);

  it('under a wrapper that ignores SIGTERM: SIGTERM once, SIGKILL once, and the Write never runs', async () => {
    const written = await scriptDoneThenWrite();
    // The agent's recorded pid is this shell's, which ignores TERM (Claude Code handles TERM
    // itself even when it inherits it ignored, so `trap '' TERM; exec claude` would not do).
    const wrapper = join(h.root, 'claude-ignoring-term');
    writeFileSync(wrapper, `#!/bin/sh\ntrap '' TERM\n${shellQuote(claudeBin())} "$@"\n`);
    chmodSync(wrapper, 0o755);
    const file = await h.request('fix-me.md', REQUEST);
    const d = start(wrapper, CLOSE_AFTER_ASKING_MIN);
    const dir = await doneAndAsking(file, d.output);
    const { agentPid } = await stateOf(dir);
    const cli = Number(
      execFileSync('pgrep', ['-P', String(agentPid)], { encoding: 'utf8' })
        .trim()
        .split('\n')[0],
    );
    h.killAtEnd(agentPid as number, cli);

    const exited = await waitForExited(dir, d.output);
    expect(existsSync(written), 'the Write ran').toBe(false);
    // 128 + SIGKILL: only the last step ended the shell; the CLI went with its terminal.
    expect(exited.exitCode, d.output().slice(-3000)).toBe(137);
    const closing = events(h.root).filter((e) => e.event === 'agent-closing');
    expect(closing.map((e) => [e.step, e.agentState])).toEqual([
      ['SIGTERM', 'waiting'],
      ['SIGKILL', undefined],
    ]);
    expect(d.output().match(/SIG(TERM|KILL)$/gm)).toEqual(['SIGTERM', 'SIGKILL']);
    await waitFor(() => !isAlive(cli), { message: `the CLI (pid ${cli}) to end` });
    expect(existsSync(written)).toBe(false);
    expect(claude.api.messages()).toHaveLength(2);
  }, 120_000);
});
