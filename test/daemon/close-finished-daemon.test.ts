/**
 * `--close-after-done` through a real daemon, tmux and processes, with a stand-in for interactive
 * Claude Code (`--agent claude --claude-bin`) that reports its state through the real `engine
 * agent-hook`, marks the item done and then ignores the polite ask (it ignores Ctrl-C, or reads it
 * as a byte): it is signalled by its recorded identity after the grace period, or at once when it
 * waits for an answer. The polite ask itself, and a permission prompt it must not answer, are
 * tested with the real CLI (test/claude/interactive.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLOSE_GRACE_MS } from '../../src/daemon/close-finished.js';
import { loadNodePty } from '../../src/runners/pty-runner.js';
import {
  events,
  isAlive,
  recoveries,
  stateOf,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
  waitForText,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

const CLOSE_AFTER_MIN = 0.02;
/** File times come from the kernel's coarse clock (a tick behind the one the daemon reads). */
const MTIME_SLACK_MS = 50;

/** The hook Claude Code runs when its turn ends: agent-state.json says `idle`, at its prompt. */
const STOP_HOOK = `echo '{"hook_event_name":"Stop"}' | engine agent-hook`;
/**
 * A stand-in whose terminal is raw: keys typed into its pane reach it as bytes, never as signals,
 * and `cat` keeps them in `<session>/typed` (keys typed before it starts wait in the terminal).
 */
const RECORD_KEYS = ['stty raw -echo', 'exec cat > "$ENGINE_SESSION_DIR/typed"'] as const;
const SWAP_DONE = [
  `engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-fix' '#done-fix'`,
  `grep -q '#done-fix' "$ENGINE_REQUEST_FILE" || exit 3`,
] as const;

/**
 * The hook interactive Claude Code runs on a 429: agent-state.json says `limited`. The hook's
 * process may take the ask's Ctrl-C once it has written the state (Node resets an ignored SIGINT):
 * what counts is the state it wrote.
 */
const REPORT_LIMIT = [
  `echo '{"hook_event_name":"StopFailure","error":"rate_limit"}' | engine agent-hook`,
  '[ -e "$ENGINE_SESSION_DIR/agent-state.json" ] || exit 3',
] as const;

async function fakeClaude(lines: string[]): Promise<string> {
  const fake = join(h.root, 'fake-claude');
  await writeFile(fake, ['#!/bin/sh', ...lines, ''].join('\n'));
  await chmod(fake, 0o755);
  return fake;
}

it('asks a finished claude agent at its prompt with Ctrl-C twice; one that does not exit gets SIGTERM a grace period after the ask', async () => {
  const fake = await fakeClaude([
    RECORD_KEYS[0],
    // At its prompt (ready for the ask) before it reports done.
    STOP_HOOK,
    ...SWAP_DONE,
    RECORD_KEYS[1],
  ]);
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');

  const d = h.start([
    '--agent',
    'claude',
    '--claude-bin',
    fake,
    '--close-after-done',
    String(CLOSE_AFTER_MIN),
  ]);

  const done = await waitForTag(file, ['#done-fix', '#needs-fix'], 30_000);
  expect(tagsOf(done), d.output()).toEqual(['#done-fix']);
  const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!);
  const running = await waitForState(dir, (s) => s.agentPid !== null);
  h.killAtEnd(running.agentPid as number);
  expect(isAlive(running.agentPid as number)).toBe(true);

  const exited = await waitFor(
    async () => {
      const state = await stateOf(dir);
      return state.status === 'exited' && state;
    },
    { timeoutMs: 60_000, message: () => `the exit of ${dir}; daemon:\n${d.output()}` },
  );
  // 128 + SIGTERM: signalled, after the ask and its grace period.
  expect(exited.exitCode, d.output()).toBe(143);
  const doneAt = statSync(join(dir, '.done')).mtimeMs;
  const askedAt = statSync(join(dir, '.close-asked')).mtimeMs;
  expect(askedAt - doneAt).toBeGreaterThanOrEqual(CLOSE_AFTER_MIN * 60_000 - MTIME_SLACK_MS);
  const closing = events(h.root).filter((e) => e.event === 'agent-closing');
  expect(closing.map((e) => e.step)).toEqual(['ask', 'SIGTERM']);
  // The grace period runs from the ask's mark (the event is recorded just after it).
  const term = Date.parse(closing[1]!.time);
  expect(term - askedAt).toBeGreaterThanOrEqual(CLOSE_GRACE_MS - MTIME_SLACK_MS);
  // The ask: Ctrl-C twice, nothing else (no text, no Enter that could answer a question).
  expect(readFileSync(join(dir, 'typed'), 'latin1')).toBe('\x03\x03');
}, 90_000);

it('never types into a finished claude agent that waits for an answer: SIGTERM when the close is due, no ask', async () => {
  const fake = await fakeClaude([
    RECORD_KEYS[0],
    // It asks for permission (the hook Claude Code runs as its dialog shows), and is done.
    `echo '{"hook_event_name":"PermissionRequest","tool_name":"Write"}' | engine agent-hook`,
    ...SWAP_DONE,
    RECORD_KEYS[1],
  ]);
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const d = h.start([
    ...['--agent', 'claude', '--claude-bin', fake],
    ...['--close-after-done', String(CLOSE_AFTER_MIN)],
  ]);
  const done = await waitForTag(file, ['#done-fix', '#needs-fix'], 30_000);
  expect(tagsOf(done), d.output()).toEqual(['#done-fix']);
  const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!);
  const running = await waitForState(dir, (s) => s.agentPid !== null);
  h.killAtEnd(running.agentPid as number);

  const exited = await waitFor(
    async () => {
      const state = await stateOf(dir);
      return state.status === 'exited' && state;
    },
    { timeoutMs: 60_000, message: () => `the exit of ${dir}; daemon:\n${d.output()}` },
  );
  expect(exited.exitCode, d.output()).toBe(143);
  const closing = events(h.root).filter((e) => e.event === 'agent-closing');
  expect(closing.map((e) => [e.step, e.agentState])).toEqual([['SIGTERM', 'waiting']]);
  // SIGTERM when the close was due: no ask, no grace period before it.
  const doneAt = statSync(join(dir, '.done')).mtimeMs;
  expect(Date.parse(closing[0]!.time) - doneAt).toBeLessThan(CLOSE_GRACE_MS);
  expect(existsSync(join(dir, '.close-asked'))).toBe(false);
  expect(readFileSync(join(dir, 'typed'), 'latin1')).toBe('');
  expect(d.output()).toContain('without keys, since it waits for an answer (permission for Write)');
}, 90_000);

it('signals a limited claude agent that does not exit when asked, and its item goes back to #delegated-fix as a usage limit', async () => {
  const fake = await fakeClaude([
    // Ready for what its report triggers (the ask's Ctrl-C) before it reports.
    "trap '' INT",
    ...REPORT_LIMIT,
    'exec sleep 600',
  ]);
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');

  const d = h.start(['--agent', 'claude', '--claude-bin', fake, '--limit-backoff', '60']);

  const requeued = await waitFor(
    async () => {
      const text = await readFile(file, 'utf8');
      return recoveries(text) === 1 && text;
    },
    { timeoutMs: 60_000, message: () => `the requeue; daemon:\n${d.output()}` },
  );
  expect(tagsOf(requeued), d.output()).toEqual(['#delegated-fix']);
  expect(requeued).toContain('**Failure**: usage-limit (not an attempt)');
  const dir = join(h.root, /\*\*Prior Session\*\*: (\S+?)\/?$/m.exec(requeued)![1]!);
  // The record is written after the request (requeue first, then `abandoned`): waited for.
  const ended = await waitForState(dir, (s) => s.status === 'abandoned');
  // 128 + SIGTERM: it ignored the ask, and was signalled after the grace period.
  expect(ended.exitCode, d.output()).toBe(143);
  expect(isAlive(ended.agentPid as number)).toBe(false);
  const closing = events(h.root).filter((e) => e.event === 'agent-closing');
  expect(closing.map((e) => [e.step, e.reason])).toEqual([
    ['ask', 'usage limit'],
    ['SIGTERM', 'usage limit'],
  ]);
  expect(events(h.root).filter((e) => e.event === 'limit-paused')).toHaveLength(1);
  expect(existsSync(join(h.root, 'sessions', '.engine', 'pause.json'))).toBe(true);
}, 90_000);

it('ends a limited claude agent that ignores the ask and SIGTERM: ask, SIGTERM, SIGKILL, each once, across a daemon restart', async () => {
  const fake = await fakeClaude([
    // Ready for what its report triggers before it reports: Ctrl-C and SIGTERM are ignored.
    "trap '' INT TERM",
    ...REPORT_LIMIT,
    'exec sleep 600',
  ]);
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const flags = ['--agent', 'claude', '--claude-bin', fake, '--limit-backoff', '60'];
  const closing = () => events(h.root).filter((e) => e.event === 'agent-closing');

  const first = h.start(flags);
  const claimed = await waitForText(file, (t) => /^\*\*Session\*\*: /m.test(t), {
    timeoutMs: 30_000,
    message: () => `the claim; daemon:\n${first.output()}`,
  });
  const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(claimed)![1]!);
  const running = await waitForState(dir, (s) => s.agentPid !== null);
  h.killAtEnd(running.agentPid as number);
  await waitFor(() => closing().some((e) => e.step === 'SIGTERM'), {
    timeoutMs: 60_000,
    message: () => `the SIGTERM; daemon:\n${first.output()}`,
  });
  // The daemon goes on polling (every 100 ms here) through the SIGTERM's grace period.
  const termAt = Date.parse(closing().find((e) => e.step === 'SIGTERM')!.time);
  await waitFor(() => Date.now() - termAt > CLOSE_GRACE_MS / 2, {
    timeoutMs: CLOSE_GRACE_MS,
    message: 'half a grace period after the SIGTERM',
  });
  expect(await first.stop()).toBe(0);
  expect(isAlive(running.agentPid as number)).toBe(true);

  const second = h.start(flags);
  const requeued = await waitForText(file, (t) => recoveries(t) === 1, {
    timeoutMs: 60_000,
    message: () => `the requeue; daemon:\n${second.output()}`,
  });
  expect(tagsOf(requeued), second.output()).toEqual(['#delegated-fix']);
  // The record is written after the request (requeue first, then `abandoned`): waited for.
  const ended = await waitForState(dir, (s) => s.status === 'abandoned');
  // 128 + SIGKILL: only the last step ended it.
  expect(ended.exitCode, second.output()).toBe(137);
  expect(closing().map((e) => e.step)).toEqual(['ask', 'SIGTERM', 'SIGKILL']);
  const warnings = (first.output() + second.output()).match(/did not exit .*; SIG\w+/g);
  expect(warnings).toEqual([
    'did not exit when asked; SIGTERM',
    'did not exit on SIGTERM; SIGKILL',
  ]);
}, 120_000);

it('waits while a human views the finished agent, and asks it to exit once nobody does', async () => {
  const pty = await loadNodePty().catch(() => null);
  if (!pty) return expect.fail('node-pty did not load: the attached client needs it');
  const fake = await fakeClaude([
    // Done only once the test has attached to its window; at its prompt before that.
    'while [ ! -e "$ENGINE_SESSION_DIR/go" ]; do sleep 0.05; done',
    STOP_HOOK,
    `engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-fix' '#done-fix' || exit 3`,
    'exec sleep 600',
  ]);
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const d = h.start([
    ...['--agent', 'claude', '--claude-bin', fake],
    ...['--close-after-done', String(CLOSE_AFTER_MIN)],
  ]);
  const claimed = await waitFor(
    async () => /^\*\*Session\*\*: (.+)$/m.exec(await readFile(file, 'utf8'))?.[1],
    { timeoutMs: 30_000, message: () => `the claim; daemon:\n${d.output()}` },
  );
  const dir = join(h.root, claimed);
  const running = await waitForState(dir, (s) => s.agentPid !== null && s.tmux?.pane != null);
  h.killAtEnd(running.agentPid as number);
  const { socket, pane } = running.tmux as { socket: string; pane: string };

  // A human attaches to the agent's window.
  const client = pty.spawn('tmux', ['-L', socket, 'attach', '-t', pane], {
    name: 'xterm',
    cols: 120,
    rows: 30,
    cwd: h.root,
    env: { ...process.env, TMUX: '', TMUX_PANE: '', TERM: 'xterm' } as Record<string, string>,
  });
  h.killAtEnd(client.pid);
  await waitFor(
    () => tmuxOut(socket, 'display-message', '-p', '-t', pane, '#{window_active_clients}') === '1',
    {
      message: 'the client to view the window',
    },
  );
  await writeFile(join(dir, 'go'), '');
  await waitForTag(file, ['#done-fix'], 30_000);
  await waitFor(() => d.output().includes('its window is being viewed'), {
    timeoutMs: 30_000,
    message: () => `the daemon to see the viewer; daemon:\n${d.output()}`,
  });
  expect(events(h.root).filter((e) => e.event === 'agent-closing')).toEqual([]);
  expect(isAlive(running.agentPid as number)).toBe(true);

  // The human detaches: the agent is asked to exit, and (not ignoring Ctrl-C) it does.
  process.kill(client.pid, 'SIGKILL');
  const exited = await waitFor(
    async () => {
      const state = await stateOf(dir);
      return state.status === 'exited' && state;
    },
    { timeoutMs: 60_000, message: () => `the exit of ${dir}; daemon:\n${d.output()}` },
  );
  expect(exited.exitCode, d.output()).not.toBe(143);
  expect(
    events(h.root)
      .filter((e) => e.event === 'agent-closing')
      .map((e) => e.step),
  ).toEqual(['ask']);
}, 90_000);

function tmuxOut(socket: string, ...args: string[]): string {
  try {
    return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}
