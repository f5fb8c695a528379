/**
 * `engine close FILE` with a real daemon (`--close-after-done 0`: it never closes on its own), tmux
 * and a stand-in for interactive Claude Code (`--agent claude --claude-bin`) that reports its state
 * through the real `engine agent-hook` and marks its item done, then stays open. The close takes
 * the daemon's steps, each once even with the daemon following the same session.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  events,
  isAlive,
  read,
  stateOf,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';

const h = useDaemonHarness();

const SWAP_DONE = [
  `engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-fix' '#done-fix'`,
  `grep -q '#done-fix' "$ENGINE_REQUEST_FILE" || exit 3`,
] as const;

async function fakeClaude(lines: string[]): Promise<string> {
  const fake = join(h.root, 'fake-claude');
  await writeFile(fake, ['#!/bin/sh', ...lines, ''].join('\n'));
  await chmod(fake, 0o755);
  return fake;
}

/** A daemon that never closes finished agents, and a done item whose stand-in stays open. */
async function doneWithOpenAgent(lines: string[]) {
  const fake = await fakeClaude(lines);
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const d = h.start(['--agent', 'claude', '--claude-bin', fake, '--close-after-done', '0']);
  const done = await waitForTag(file, ['#done-fix', '#needs-fix'], 30_000);
  expect(tagsOf(done), d.output()).toEqual(['#done-fix']);
  const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!);
  const running = await waitForState(dir, (s) => s.agentPid !== null);
  const agentPid = running.agentPid as number;
  h.killAtEnd(agentPid);
  return { d, file, dir, agentPid };
}

it('closes a done item whose agent waits, not at its prompt: SIGTERM at once, taken once', async () => {
  const { d, file, dir, agentPid } = await doneWithOpenAgent([...SWAP_DONE, 'exec sleep 600']);
  expect(isAlive(agentPid)).toBe(true);

  const result = await runCli(['close', file]);
  expect(result.code, result.stderr + d.output()).toBe(0);
  expect(result.stdout).toBe(
    `Closed the agent of ${file} (pid ${agentPid}, ${/sessions\/.+$/.exec(dir)![0]})\n`,
  );
  expect(isAlive(agentPid)).toBe(false);
  expect(existsSync(join(dir, '.close-requested'))).toBe(true);
  const exited = await waitForState(
    dir,
    (s) => s.status === 'exited',
    () => d.output(),
  );
  expect(exited.exitCode).toBe(143);
  const log = events(h.root);
  expect(log.filter((e) => e.event === 'close-requested')).toMatchObject([
    { noun: 'fix', agentPid, reason: 'engine close' },
  ]);
  // Taken once, by the command or by the daemon that follows the same session.
  expect(log.filter((e) => e.event === 'agent-closing').map((e) => e.step)).toEqual(['SIGTERM']);
  expect(tagsOf(await read(file))).toEqual(['#done-fix']);
});

it('asks a done agent at its own prompt with Ctrl-C twice, and nothing else', async () => {
  const { file, dir, agentPid } = await doneWithOpenAgent([
    // Raw before it reports: the keys reach it as bytes, and it exits once it has read two.
    'stty raw -echo',
    `echo '{"hook_event_name":"Stop"}' | engine agent-hook`,
    ...SWAP_DONE,
    'exec head -c 2 > "$ENGINE_SESSION_DIR/typed"',
  ]);
  const result = await runCli(['close', file, '--json']);
  expect(result.code, result.stderr).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ noun: 'fix', agentPid });
  expect(readFileSync(join(dir, 'typed'), 'latin1')).toBe('\x03\x03');
  const steps = events(h.root).filter((e) => e.event === 'agent-closing');
  expect(steps.map((e) => [e.step, e.reason])).toEqual([['ask', 'asked']]);
  expect((await waitForState(dir, (s) => s.status === 'exited')).exitCode).toBe(0);
});

it('refuses an item that is not done, a done item whose agent exited, and one without a session', async () => {
  const claimed = await h.request('a.md', '# A\n**Tags**: #claimed-fix\n');
  const notDone = await runCli(['close', claimed, '--root', h.root]);
  expect(notDone.code).toBe(1);
  expect(notDone.stderr).toContain(
    "carries #claimed-fix on its Tags line or front matter, not #done-*: only a finished item's agent is closed (engine cancel ends a running one)",
  );
  const noSession = await h.request('b.md', '# B\n**Tags**: #done-fix\n');
  const none = await runCli(['close', noSession, '--root', h.root]);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain('is done, but names no session of engine');

  const { d, file, dir } = await doneWithOpenAgent([...SWAP_DONE]);
  await waitForState(
    dir,
    (s) => s.status === 'exited',
    () => d.output(),
  );
  const exited = await runCli(['close', file]);
  expect(exited.code).toBe(1);
  expect(exited.stderr).toBe(`ERROR: ${file} is done and its agent has exited: nothing to close\n`);
  expect((await stateOf(dir)).status).toBe('exited');
  expect(events(h.root).filter((e) => e.event === 'close-requested')).toEqual([]);
});

it("joins the close the daemon's --close-after-done already began: no second ask, one SIGTERM", async () => {
  // The project's setting, read by the daemon and by engine close alike.
  await writeFile(join(h.root, 'directives', 'engine.json'), '{ "closeAfterDone": 0.01 }\n');
  const fake = await fakeClaude([
    // Raw: the ask's Ctrl-C reaches it as bytes, and it stays (ready before it reports).
    'stty raw -echo',
    `echo '{"hook_event_name":"Stop"}' | engine agent-hook`,
    ...SWAP_DONE,
    'exec cat > "$ENGINE_SESSION_DIR/typed"',
  ]);
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const d = h.start(['--agent', 'claude', '--claude-bin', fake]);
  const done = await waitForTag(file, ['#done-fix', '#needs-fix'], 30_000);
  const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!);
  const running = await waitForState(dir, (s) => s.agentPid !== null);
  h.killAtEnd(running.agentPid as number);
  await waitForState(
    dir,
    () => existsSync(join(dir, '.close-asked')),
    () => d.output(),
  );

  const result = await runCli(['close', file]);
  expect(result.code, result.stderr + d.output()).toBe(0);
  const steps = events(h.root).filter((e) => e.event === 'agent-closing');
  expect(steps.map((e) => e.step)).toEqual(['ask', 'SIGTERM']);
  expect(readFileSync(join(dir, 'typed'), 'latin1')).toBe('\x03\x03');
}, 60_000);
