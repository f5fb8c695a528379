/**
 * A claimed request moved or deleted while its agent runs, and a request with two names (hard
 * links): the daemon follows a move, ends the session of a deleted request with its reason, never
 * kills the agent for either, and never dispatches a hard-linked request.
 */
import { existsSync, readFileSync } from 'node:fs';
import { link, mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isAlive,
  read,
  release,
  stateOf,
  useDaemonHarness,
  waitForReady,
  waitForState,
  waitForText,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

async function claimedAgent(file: string, d: DaemonProcess) {
  await waitForReady(d);
  await writeFile(file, '# Move me\n**Tags**: #delegated-fix\n');
  const [agent] = await h.waitForAgents(1);
  await waitFor(() => existsSync(join(agent!.session, '.agent')));
  return agent!;
}

/** A held agent claims REQ.md, which is then renamed to `name`; its session has followed. */
async function claimedThenMoved(name: string) {
  const d = h.start([], { TEST_AGENT_MODE: 'hold' });
  const before = h.file('REQ.md');
  const after = h.file(name);
  const agent = await claimedAgent(before, d);
  await rename(before, after);
  await waitForState(
    agent.session,
    (state) => state.requestFile === after,
    () => d.output(),
  );
  return { d, before, after, agent };
}

describe('a claimed request moved while its agent runs', () => {
  it('keeps its claim: the session follows it, the agent learns the new path and marks it done', async () => {
    const { d, before, after, agent } = await claimedThenMoved('sub-moved.md');
    expect(readFileSync(join(agent.session, 'request-file'), 'utf8')).toBe(`${after}\n`);
    expect(isAlive(agent.pid)).toBe(true);
    await release(agent.session);
    await waitForText(after, '#done-fix', {
      message: () => d.output(),
    });
    expect(existsSync(before)).toBe(false);
    expect(h.agents()).toHaveLength(1);
    expect(d.output()).toMatch(/REQ\.md moved to .*sub-moved\.md/);
  });

  it('is requeued at its new path when the agent dies there', async () => {
    const { d, before, after, agent } = await claimedThenMoved('MOVED.md');
    process.kill(agent.pid, 'SIGKILL');
    await waitForText(after, '## Recovery', {
      message: () => d.output(),
    });
    expect(await read(after)).toMatch(/\*\*Tags\*\*: #needs-fix\n/);
    expect(existsSync(before)).toBe(false);
  });
});

describe('a claimed request deleted while its agent runs', () => {
  it('is not gone when it is written again at once (git rewrites a file so): its claim stays followed', async () => {
    const pauses = join(h.root, 'pauses');
    await mkdir(pauses);
    // Held right before its second look, until the file is back.
    const d = h.start(['--poll-ms', '5000'], {
      TEST_AGENT_MODE: 'hold',
      ENGINE_PAUSEPOINT: 'before-look-again',
      ENGINE_PAUSE_DIR: pauses,
    });
    const file = h.file('REWRITTEN.md');
    const agent = await claimedAgent(file, d);
    const text = await read(file);
    await rm(file);
    await waitFor(() => existsSync(join(pauses, 'before-look-again.paused')), {
      message: () => d.output(),
    });
    // The log line is written before the pause, but reaches this process through a pipe.
    await waitFor(
      () => /REWRITTEN\.md is gone from its path: looked at again in 1000 ms/.test(d.output()),
      { message: () => d.output() },
    );
    await writeFile(file, text);
    await writeFile(join(pauses, 'before-look-again.resume'), '');
    await release(agent.session);
    await waitForText(file, '#done-fix', { message: () => d.output() });
    await waitFor(() => /done: .*REWRITTEN\.md/.test(d.output()), { message: () => d.output() });
    expect(d.output()).not.toMatch(/was moved or deleted/);
    expect(h.agents()).toHaveLength(1);
  });

  it('is named in a warning, its agent is left running, and its session ends abandoned with the reason', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    const file = h.file('GONE.md');
    const agent = await claimedAgent(file, d);
    await rm(file);
    await waitFor(() => /GONE\.md was moved or deleted/.test(d.output()));
    expect(isAlive(agent.pid)).toBe(true);
    expect((await stateOf(agent.session)).status).toBe('running');
    // The agent's own done-swap fails on the missing file, and it exits.
    await release(agent.session);
    const abandoned = await waitForState(
      agent.session,
      (state) => state.status === 'abandoned',
      () => d.output(),
    );
    expect(abandoned.reason).toMatch(/GONE\.md was deleted/);
    const events = () => readFileSync(h.file('.engine', 'events.jsonl'), 'utf8');
    // The event is appended right after the record is written.
    await waitFor(() => /"event":"exited".*GONE\.md was deleted/.test(events()));
    expect(events()).toMatch(/"event":"request-gone"/);
  });
});

describe('a request with two names (hard links)', () => {
  it('is never dispatched, with a warning that says why; once it has one name it runs once', async () => {
    const d = h.start();
    await waitForReady(d);
    const real = h.file('real-b.md');
    const hard = h.file('hard-b.md');
    await writeFile(real, '# Linked\n**Tags**: #delegated-fix\n');
    await link(real, hard);
    await waitFor(
      () =>
        /real-b\.md: it has 2 names/.test(d.output()) &&
        /hard-b\.md: it has 2 names/.test(d.output()),
      { message: () => d.output() },
    );
    expect(h.agents()).toHaveLength(0);
    expect(await read(real)).toContain('#delegated-fix');
    await rm(hard);
    const now = new Date();
    await utimes(real, now, now);
    await waitForText(real, '#done-fix', {
      message: () => d.output(),
    });
    expect(h.agents()).toHaveLength(1);
  });
});
