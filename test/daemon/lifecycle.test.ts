import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentStarts,
  makeRoot,
  release,
  startDaemon,
  tmuxWindows,
  waitForReady,
  type DaemonProcess,
  type TestRoot,
} from '../helpers/daemon-harness.js';
import { checkLiveness, readProcessIdentity } from '../../src/process/process-identity.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

let t: TestRoot;
let daemons: DaemonProcess[] = [];
/** Wrapper and agent pids a test must not leave running should it fail: killed by pid. */
let strays: number[] = [];

afterEach(async () => {
  for (const d of daemons) if (d.child.exitCode === null) await d.kill9();
  daemons = [];
  for (const pid of strays.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await t?.cleanup();
});

function start(extra: string[] = [], env: Record<string, string> = {}): DaemonProcess {
  const d = startDaemon(t, extra, env);
  daemons.push(d);
  return d;
}

/** Alive as the daemon judges it: a zombie is dead. */
function isAlive(pid: number): boolean {
  const identity = readProcessIdentity(pid);
  return identity !== null && checkLiveness(identity) === 'alive';
}

const stateOf = async (sessionDir: string) =>
  JSON.parse(await readFile(join(sessionDir, '.state.json'), 'utf8')) as Record<string, unknown>;

describe('the dispatch lifecycle', () => {
  it('claims a #delegated-X, runs the agent in a tmux window, and the agent marks it done', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'REQUEST.md');
    await writeFile(file, '# Fix the login\n**Tags**: #delegated-fix #P1\n\nDetails.\n');

    const text = await waitFor(async () => {
      const now = await readFile(file, 'utf8');
      return now.includes('#claimed-fix') && now.includes('**Session**:') ? now : null;
    });
    expect(text).not.toContain('#delegated-fix');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    expect(agent?.file).toBe(file);
    await waitFor(() => tmuxWindows(t.socket).some((w) => /^agent-fix-\d+/.test(w)), {
      message: 'agent window',
    });
    const state = await waitFor(async () => {
      const s = await stateOf(agent!.session);
      return s.status === 'running' && typeof s.agentPid === 'number' ? s : null;
    });
    expect(() => process.kill(state.pid as number, 0)).not.toThrow();
    expect(state).toMatchObject({
      noun: 'fix',
      skill: '/fix',
      tag: '#claimed-fix',
      requestFile: file,
      attempt: 1,
    });

    await release(agent!.session);
    await waitFor(async () => (await readFile(file, 'utf8')).includes('#done-fix'));
    const final = await waitFor(async () => {
      const s = await stateOf(agent!.session);
      return s.status === 'exited' ? s : null;
    });
    expect(final.exitCode).toBe(0);
    expect(await readFile(file, 'utf8')).not.toContain('#claimed-fix');
  });

  it('learns of the agent, its done and its exit from file events, without polling', async () => {
    t = await makeRoot();
    // A poll period far beyond every deadline below: only the change signals can wake the watch.
    const d = start(['--poll-ms', '600000'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'EVENTS.md');
    await writeFile(file, '# E\n**Tags**: #delegated-fix\n');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const running = await waitFor(async () => {
      const s = await stateOf(agent!.session);
      return s.status === 'running' && s.agentPid === agent!.pid ? s : null;
    });
    expect(running.pid).toEqual(expect.any(Number));
    await release(agent!.session);
    await waitFor(() => d.output().includes(`done: ${file}`), { message: 'the done' });
    const final = await waitFor(async () => {
      const s = await stateOf(agent!.session);
      return s.status === 'exited' ? s : null;
    });
    expect(final.exitCode).toBe(0);
  });

  it('never dispatches #needs-X or #next-X, and leaves a noun without a route untouched', async () => {
    t = await makeRoot();
    const needs = join(t.sessions, 'NEEDS.md');
    const next = join(t.sessions, 'NEXT.md');
    const manual = join(t.sessions, 'MANUAL.md');
    await writeFile(needs, '# A\n**Tags**: #needs-fix\n');
    await writeFile(next, '# B\n**Tags**: #next-fix\n');
    await writeFile(manual, '# C\n**Tags**: #delegated-manual #delegated-unknown\n');
    const d = start();
    await waitForReady(d);
    const sentinel = join(t.sessions, 'SENTINEL.md');
    await writeFile(sentinel, '# S\n**Tags**: #delegated-chores\n');
    await waitFor(async () => (await readFile(sentinel, 'utf8')).includes('#done-chores'));
    expect(await readFile(needs, 'utf8')).toBe('# A\n**Tags**: #needs-fix\n');
    expect(await readFile(next, 'utf8')).toBe('# B\n**Tags**: #next-fix\n');
    expect(await readFile(manual, 'utf8')).toBe(
      '# C\n**Tags**: #delegated-manual #delegated-unknown\n',
    );
    expect(agentStarts(t).map((a) => a.file)).toEqual([sentinel]);
    expect(d.output()).toMatch(/#delegated-manual is marked not dispatchable/);
    expect(d.output()).toMatch(/#delegated-unknown has no row in §TAG_DISPATCH/);
  });

  it('does not dispatch a tag added and removed within the debounce window', async () => {
    t = await makeRoot();
    const d = start(['--debounce-ms', '1500']);
    await waitForReady(d);
    const flicker = join(t.sessions, 'FLICKER.md');
    await writeFile(flicker, '# F\n**Tags**: #delegated-fix\n');
    await writeFile(flicker, '# F\n**Tags**: #needs-fix\n');
    const sentinel = join(t.sessions, 'SENTINEL.md');
    await writeFile(sentinel, '# S\n**Tags**: #delegated-chores\n');
    await waitFor(async () => (await readFile(sentinel, 'utf8')).includes('#done-chores'));
    expect(await readFile(flicker, 'utf8')).toBe('# F\n**Tags**: #needs-fix\n');
    expect(agentStarts(t).map((a) => a.file)).toEqual([sentinel]);
  });

  it('restores a claim that an editor overwrote with an older copy, without a second agent', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'REQUEST.md');
    const original = '# Fix\n**Tags**: #delegated-fix\n\nNotes.\n';
    await writeFile(file, original);
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const claimed = await waitFor(async () => {
      const now = await readFile(file, 'utf8');
      return now.includes('#claimed-fix') ? now : null;
    });
    // The editor read before the claim and saves after it, with one more human line.
    await writeFile(file, `${original}A human line.\n`);
    const restored = await waitFor(async () => {
      const now = await readFile(file, 'utf8');
      return now.includes('#claimed-fix') && now.includes('A human line.') ? now : null;
    });
    expect(restored).toContain(claimed.split('\n')[2]);
    // Logged once the write is done (after the directory's fsync): the file can show it first.
    await waitFor(() => /restored the claim/.test(d.output()), {
      message: `the restore in the log; ${d.output()}`,
    });
    await release(agent!.session);
    await waitFor(async () => (await readFile(file, 'utf8')).includes('#done-fix'));
    expect(agentStarts(t)).toHaveLength(1);
  });

  it('restores a claim saved over after its wrapper died, while its agent lives on', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold', TEST_AGENT_IGNORE_HUP: '1' });
    await waitForReady(d);
    const file = join(t.sessions, 'ORPHAN.md');
    const original = '# Fix\n**Tags**: #delegated-fix\n\nNotes.\n';
    await writeFile(file, original);
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const state = await waitFor(async () => {
      const now = await stateOf(agent!.session);
      return now.pid && now.agentPid ? now : null;
    });
    // The wrapper is killed on its own: the agent, reparented, still works on the item.
    process.kill(state.pid as number, 'SIGKILL');
    await waitFor(() => !isAlive(state.pid as number));
    expect(isAlive(agent!.pid)).toBe(true);
    await writeFile(file, `${original}A human line.\n`);
    await waitFor(async () => {
      const now = await readFile(file, 'utf8');
      return now.includes('#claimed-fix') && now.includes('A human line.');
    });
    await waitFor(() => /restored the claim/.test(d.output()), {
      message: `the restore in the log; ${d.output()}`,
    });
    await release(agent!.session);
    await waitFor(async () => (await readFile(file, 'utf8')).includes('#done-fix'));
    expect(agentStarts(t)).toHaveLength(1);
  });

  it('keeps the claim of an agent whose wrapper was killed, and engine status shows it running', async () => {
    t = await makeRoot();
    const first = start([], { TEST_AGENT_MODE: 'hold', TEST_AGENT_IGNORE_HUP: '1' });
    await waitForReady(first);
    const file = join(t.sessions, 'ORPHAN.md');
    await writeFile(file, '# Fix\n**Tags**: #delegated-fix\n');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const state = await waitFor(async () => {
      const now = await stateOf(agent!.session);
      return now.pid && now.agentPid ? now : null;
    });
    // The recorder (the wrapper `.wrapper` names) is killed on its own; the agent works on.
    process.kill(state.pid as number, 'SIGKILL');
    await waitFor(() => !isAlive(state.pid as number));
    expect(isAlive(agent!.pid)).toBe(true);
    // A daemon that starts now judges the claim in its first reap: it adopts it.
    await first.stop();
    const second = start([], { TEST_AGENT_MODE: 'hold', TEST_AGENT_IGNORE_HUP: '1' });
    await waitFor(() => second.output().includes(`adopted running agent for ${file}`), {
      message: () => `the adoption; ${second.output()}`,
    });
    const status = await runCli(['status', '--json', '--root', t.root]);
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
    const text = await readFile(file, 'utf8');
    expect(text).toContain('#claimed-fix');
    expect(text).not.toContain('## Recovery');
    await release(agent!.session);
    await waitFor(async () => (await readFile(file, 'utf8')).includes('#done-fix'));
    expect(agentStarts(t)).toHaveLength(1);
  });

  it('requeues the item when a human closes the agent’s window', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'CLOSED.md');
    await writeFile(file, '# Fix\n**Tags**: #delegated-fix\n');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const state = await waitFor(async () => {
      const now = await stateOf(agent!.session);
      return now.status === 'running' && now.agentPid ? now : null;
    });
    strays = [state.pid as number, agent!.pid];
    const { pane } = state.tmux as { pane: string };
    execFileSync('tmux', ['-L', t.socket, 'kill-window', '-t', pane]);
    const text = await waitFor(
      async () => {
        const now = await readFile(file, 'utf8');
        return now.includes('#needs-fix') ? now : null;
      },
      { message: `the requeue; ${d.output()}` },
    );
    expect(text).not.toContain('#claimed-fix');
    expect(text).toContain('## Recovery');
    expect(text).toMatch(/\*\*Reason\*\*: agent exited with code 129 without marking #done-fix/);
    expect(isAlive(agent!.pid)).toBe(false);
    expect(isAlive(state.pid as number)).toBe(false);
  });

  it('passes hostile file names to the agent as one literal argument, never through a shell', async () => {
    t = await makeRoot();
    const d = start();
    await waitForReady(d);
    const name = `x $(touch CANARY1) ; touch CANARY2 'q" \`touch CANARY3\` -x.md`;
    const file = join(t.sessions, name);
    await writeFile(file, '# Hostile\n**Tags**: #delegated-fix\n');
    await waitFor(async () => (await readFile(file, 'utf8')).includes('#done-fix'));
    const [agent] = agentStarts(t);
    expect(agent?.argv).toEqual([file]);
    for (const dir of [t.root, t.sessions, process.cwd()]) {
      for (const canary of ['CANARY1', 'CANARY2', 'CANARY3'])
        expect(existsSync(join(dir, canary))).toBe(false);
    }
  });

  it('refuses to monitor #needs-* and #next-*', async () => {
    t = await makeRoot();
    const needs = start(['--monitor-tags=#needs-*']);
    expect(await needs.exited).toBe(1);
    expect(needs.output()).toMatch(/ERROR: Refusing to monitor '#needs-\*': #needs-X is staging/);
    const next = start(['--monitor-tags=#delegated-fix,#next-fix']);
    expect(await next.exited).toBe(1);
    expect(next.output()).toMatch(/#next-X is claimed by the next skill/);
  });

  it('refuses a second daemon on the same root', async () => {
    t = await makeRoot();
    const first = start();
    await waitForReady(first);
    const second = start();
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `ERROR: another daemon (pid ${first.child.pid}) is monitoring ${t.root}`,
    );
    expect(await first.stop()).toBe(0);
  });
});
