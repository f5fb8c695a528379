import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isAlive,
  read,
  release,
  tmuxWindows,
  useDaemonHarness,
  waitForReady,
  waitForState,
  waitForText,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

/** The restore is logged, and the one agent then finishes the item: no second agent started. */
async function restoredWithoutSecondAgent(d: DaemonProcess, file: string, session: string) {
  // Logged once the write is done (after the directory's fsync): the file can show it first.
  await waitFor(() => /restored the claim/.test(d.output()), {
    message: `the restore in the log; ${d.output()}`,
  });
  await release(session);
  await waitForText(file, '#done-fix');
  expect(h.agents()).toHaveLength(1);
}

describe('the dispatch lifecycle', () => {
  it('claims a #delegated-X, runs the agent in a tmux window, and the agent marks it done', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request(
      'REQUEST.md',
      '# Fix the login\n**Tags**: #delegated-fix #P1\n\nDetails.\n',
    );

    const text = await waitForText(
      file,
      (now) => now.includes('#claimed-fix') && now.includes('**Session**:'),
    );
    expect(text).not.toContain('#delegated-fix');
    const [agent] = await h.waitForAgents(1);
    expect(agent?.file).toBe(file);
    await waitFor(() => tmuxWindows(h.socket).some((w) => /^agent-fix-\d+/.test(w)), {
      message: 'agent window',
    });
    const state = await waitForState(
      agent!.session,
      (s) => s.status === 'running' && typeof s.agentPid === 'number',
    );
    expect(() => process.kill(state.pid as number, 0)).not.toThrow();
    expect(state).toMatchObject({
      noun: 'fix',
      skill: '/fix',
      tag: '#claimed-fix',
      requestFile: file,
      attempt: 1,
    });

    await release(agent!.session);
    await waitForText(file, '#done-fix');
    const final = await waitForState(agent!.session, (s) => s.status === 'exited');
    expect(final.exitCode).toBe(0);
    expect(await read(file)).not.toContain('#claimed-fix');
  });

  it('learns of the agent, its done and its exit from file events, without polling', async () => {
    // A poll period far beyond every deadline below: only the change signals can wake the watch.
    const d = h.start(['--poll-ms', '600000'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('EVENTS.md', '# E\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    const running = await waitForState(
      agent!.session,
      (s) => s.status === 'running' && s.agentPid === agent!.pid,
    );
    expect(running.pid).toEqual(expect.any(Number));
    await release(agent!.session);
    await waitFor(() => d.output().includes(`done: ${file}`), { message: 'the done' });
    const final = await waitForState(agent!.session, (s) => s.status === 'exited');
    expect(final.exitCode).toBe(0);
  });

  it('never dispatches #needs-X or #next-X, and leaves a noun without a route untouched', async () => {
    const needs = h.file('NEEDS.md');
    const next = h.file('NEXT.md');
    const manual = h.file('MANUAL.md');
    await writeFile(needs, '# A\n**Tags**: #needs-fix\n');
    await writeFile(next, '# B\n**Tags**: #next-fix\n');
    await writeFile(manual, '# C\n**Tags**: #delegated-manual #delegated-unknown\n');
    const d = h.start();
    await waitForReady(d);
    const sentinel = await h.request('SENTINEL.md', '# S\n**Tags**: #delegated-chores\n');
    await waitForText(sentinel, '#done-chores');
    expect(await read(needs)).toBe('# A\n**Tags**: #needs-fix\n');
    expect(await read(next)).toBe('# B\n**Tags**: #next-fix\n');
    expect(await read(manual)).toBe('# C\n**Tags**: #delegated-manual #delegated-unknown\n');
    expect(h.agents().map((a) => a.file)).toEqual([sentinel]);
    expect(d.output()).toMatch(/#delegated-manual is marked not dispatchable/);
    expect(d.output()).toMatch(/#delegated-unknown has no row in §TAG_DISPATCH/);
  });

  it('does not dispatch a tag added and removed within the debounce window', async () => {
    const d = h.start(['--debounce-ms', '1500']);
    await waitForReady(d);
    const flicker = await h.request('FLICKER.md', '# F\n**Tags**: #delegated-fix\n');
    await writeFile(flicker, '# F\n**Tags**: #needs-fix\n');
    const sentinel = await h.request('SENTINEL.md', '# S\n**Tags**: #delegated-chores\n');
    await waitForText(sentinel, '#done-chores');
    expect(await read(flicker)).toBe('# F\n**Tags**: #needs-fix\n');
    expect(h.agents().map((a) => a.file)).toEqual([sentinel]);
  });

  it('restores a claim that an editor overwrote with an older copy, without a second agent', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = h.file('REQUEST.md');
    const original = '# Fix\n**Tags**: #delegated-fix\n\nNotes.\n';
    await writeFile(file, original);
    const [agent] = await h.waitForAgents(1);
    const claimed = await waitForText(file, '#claimed-fix');
    // The editor read before the claim and saves after it, with one more human line.
    await writeFile(file, `${original}A human line.\n`);
    const restored = await waitForText(
      file,
      (now) => now.includes('#claimed-fix') && now.includes('A human line.'),
    );
    expect(restored).toContain(claimed.split('\n')[2]);
    await restoredWithoutSecondAgent(d, file, agent!.session);
  });

  it('restores a claim saved over after its wrapper died, while its agent lives on', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold', TEST_AGENT_IGNORE_HUP: '1' });
    await waitForReady(d);
    const file = h.file('ORPHAN.md');
    const original = '# Fix\n**Tags**: #delegated-fix\n\nNotes.\n';
    await writeFile(file, original);
    const [agent] = await h.waitForAgents(1);
    const state = await waitForState(agent!.session, (now) => now.pid && now.agentPid);
    // The wrapper is killed on its own: the agent, reparented, still works on the item.
    process.kill(state.pid as number, 'SIGKILL');
    await waitFor(() => !isAlive(state.pid as number));
    expect(isAlive(agent!.pid)).toBe(true);
    await writeFile(file, `${original}A human line.\n`);
    await waitForText(file, (now) => now.includes('#claimed-fix') && now.includes('A human line.'));
    await restoredWithoutSecondAgent(d, file, agent!.session);
  });

  it('keeps the claim of an agent whose wrapper was killed, and engine status shows it running', async () => {
    const first = h.start([], { TEST_AGENT_MODE: 'hold', TEST_AGENT_IGNORE_HUP: '1' });
    await waitForReady(first);
    const file = await h.request('ORPHAN.md', '# Fix\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    const state = await waitForState(agent!.session, (now) => now.pid && now.agentPid);
    // The recorder (the wrapper `.wrapper` names) is killed on its own; the agent works on.
    process.kill(state.pid as number, 'SIGKILL');
    await waitFor(() => !isAlive(state.pid as number));
    expect(isAlive(agent!.pid)).toBe(true);
    // A daemon that starts now judges the claim in its first reap: it adopts it.
    await first.stop();
    const second = h.start([], { TEST_AGENT_MODE: 'hold', TEST_AGENT_IGNORE_HUP: '1' });
    await waitFor(() => second.output().includes(`adopted running agent for ${file}`), {
      message: () => `the adoption; ${second.output()}`,
    });
    const status = await runCli(['status', '--json', '--root', h.root]);
    const report = JSON.parse(status.stdout) as { running: unknown[]; stale: unknown[] };
    expect(report.stale).toEqual([]);
    expect(report.running).toEqual([
      expect.objectContaining({
        file,
        status: 'running',
        pid: state.pid,
        alive: true,
        liveness: `its agent (pid ${agent!.pid}) is alive; agent wrapper pid ${state.pid} is gone`,
      }),
    ]);
    const text = await read(file);
    expect(text).toContain('#claimed-fix');
    expect(text).not.toContain('## Recovery');
    await release(agent!.session);
    await waitForText(file, '#done-fix');
    expect(h.agents()).toHaveLength(1);
  });

  it('requeues the item when a human closes the agent’s window', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('CLOSED.md', '# Fix\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    const state = await waitForState(
      agent!.session,
      (now) => now.status === 'running' && now.agentPid,
    );
    h.killAtEnd(state.pid as number, agent!.pid);
    const { pane } = state.tmux as { pane: string };
    execFileSync('tmux', ['-L', h.socket, 'kill-window', '-t', pane]);
    const text = await waitForText(file, (now) => now.includes('#needs-fix'), {
      message: `the requeue; ${d.output()}`,
    });
    expect(text).not.toContain('#claimed-fix');
    expect(text).toContain('## Recovery');
    expect(text).toMatch(/\*\*Reason\*\*: agent exited with code 129 without marking `#done-fix`/);
    expect(isAlive(agent!.pid)).toBe(false);
    expect(isAlive(state.pid as number)).toBe(false);
  });

  it('passes hostile file names to the agent as one literal argument, never through a shell', async () => {
    const d = h.start();
    await waitForReady(d);
    const name = `x $(touch CANARY1) ; touch CANARY2 'q" \`touch CANARY3\` -x.md`;
    const file = await h.request(name, '# Hostile\n**Tags**: #delegated-fix\n');
    await waitForText(file, '#done-fix');
    const [agent] = h.agents();
    expect(agent?.argv).toEqual([file]);
    for (const dir of [h.root, h.sessions, process.cwd()]) {
      for (const canary of ['CANARY1', 'CANARY2', 'CANARY3'])
        expect(existsSync(join(dir, canary))).toBe(false);
    }
  });

  it('refuses to monitor #needs-* and #next-*', async () => {
    const needs = h.start(['--monitor-tags=#needs-*']);
    expect(await needs.exited).toBe(1);
    expect(needs.output()).toMatch(
      /ERROR: --monitor-tags: Refusing to monitor '#needs-\*': #needs-X is staging/,
    );
    const next = h.start(['--monitor-tags=#delegated-fix,#next-fix']);
    expect(await next.exited).toBe(1);
    expect(next.output()).toMatch(/#next-X is claimed by the next skill/);
  });

  it('refuses a second daemon on the same root', async () => {
    const first = h.start();
    await waitForReady(first);
    const second = h.start();
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `ERROR: another daemon (pid ${first.child.pid}) is monitoring ${h.root}`,
    );
    expect(await first.stop()).toBe(0);
  });
});
