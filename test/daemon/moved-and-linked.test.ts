/**
 * A claimed request moved or deleted while its agent runs, and a request with two names (hard
 * links): the daemon follows a move, ends the session of a deleted request with its reason, never
 * kills the agent for either, and never dispatches a hard-linked request.
 */
import { existsSync, readFileSync } from 'node:fs';
import { link, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentStarts,
  makeRoot,
  release,
  startDaemon,
  waitForReady,
  type DaemonProcess,
  type TestRoot,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

let t: TestRoot;
let daemons: DaemonProcess[] = [];

afterEach(async () => {
  for (const d of daemons) if (d.child.exitCode === null) await d.kill9();
  daemons = [];
  await t?.cleanup();
});

function start(extra: string[] = [], env: Record<string, string> = {}): DaemonProcess {
  const d = startDaemon(t, extra, env);
  daemons.push(d);
  return d;
}

const read = (file: string) => readFile(file, 'utf8');

function stateOf(sessionDir: string): {
  status: string;
  requestFile: string;
  reason: string | null;
} {
  return JSON.parse(readFileSync(join(sessionDir, '.state.json'), 'utf8')) as {
    status: string;
    requestFile: string;
    reason: string | null;
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function claimedAgent(file: string, d: DaemonProcess) {
  await waitForReady(d);
  await writeFile(file, '# Move me\n**Tags**: #delegated-fix\n');
  const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
  await waitFor(() => existsSync(join(agent!.session, '.agent')));
  return agent!;
}

describe('a claimed request moved while its agent runs', () => {
  it('keeps its claim: the session follows it, the agent learns the new path and marks it done', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    const before = join(t.sessions, 'REQ.md');
    const after = join(t.sessions, 'sub-moved.md');
    const agent = await claimedAgent(before, d);
    await rename(before, after);
    await waitFor(() => stateOf(agent.session).requestFile === after, {
      message: () => d.output(),
    });
    expect(readFileSync(join(agent.session, 'request-file'), 'utf8')).toBe(`${after}\n`);
    expect(isAlive(agent.pid)).toBe(true);
    await release(agent.session);
    await waitFor(async () => (await read(after)).includes('#done-fix'), {
      message: () => d.output(),
    });
    expect(existsSync(before)).toBe(false);
    expect(agentStarts(t)).toHaveLength(1);
    expect(d.output()).toMatch(/REQ\.md moved to .*sub-moved\.md/);
  });

  it('is requeued at its new path when the agent dies there', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    const before = join(t.sessions, 'REQ.md');
    const after = join(t.sessions, 'MOVED.md');
    const agent = await claimedAgent(before, d);
    await rename(before, after);
    await waitFor(() => stateOf(agent.session).requestFile === after, {
      message: () => d.output(),
    });
    process.kill(agent.pid, 'SIGKILL');
    await waitFor(async () => (await read(after)).includes('## Recovery'), {
      message: () => d.output(),
    });
    expect(await read(after)).toMatch(/\*\*Tags\*\*: #needs-fix\n/);
    expect(existsSync(before)).toBe(false);
  });
});

describe('a claimed request deleted while its agent runs', () => {
  it('is named in a warning, its agent is left running, and its session ends abandoned with the reason', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    const file = join(t.sessions, 'GONE.md');
    const agent = await claimedAgent(file, d);
    await rm(file);
    await waitFor(() => /GONE\.md was moved or deleted/.test(d.output()));
    expect(isAlive(agent.pid)).toBe(true);
    expect(stateOf(agent.session).status).toBe('running');
    // The agent's own done-swap fails on the missing file, and it exits.
    await release(agent.session);
    await waitFor(() => stateOf(agent.session).status === 'abandoned', {
      message: () => d.output(),
    });
    expect(stateOf(agent.session).reason).toMatch(/GONE\.md was deleted/);
    const events = () => readFileSync(join(t.sessions, '.engine', 'events.jsonl'), 'utf8');
    // The event is appended right after the record is written.
    await waitFor(() => /"event":"exited".*GONE\.md was deleted/.test(events()));
    expect(events()).toMatch(/"event":"request-gone"/);
  });
});

describe('a request with two names (hard links)', () => {
  it('is never dispatched, with a warning that says why; once it has one name it runs once', async () => {
    t = await makeRoot();
    const d = start();
    await waitForReady(d);
    const real = join(t.sessions, 'real-b.md');
    const hard = join(t.sessions, 'hard-b.md');
    await writeFile(real, '# Linked\n**Tags**: #delegated-fix\n');
    await link(real, hard);
    await waitFor(
      () =>
        /real-b\.md: it has 2 names/.test(d.output()) &&
        /hard-b\.md: it has 2 names/.test(d.output()),
      { message: () => d.output() },
    );
    expect(agentStarts(t)).toHaveLength(0);
    expect(await read(real)).toContain('#delegated-fix');
    await rm(hard);
    const now = new Date();
    await utimes(real, now, now);
    await waitFor(async () => (await read(real)).includes('#done-fix'), {
      message: () => d.output(),
    });
    expect(agentStarts(t)).toHaveLength(1);
  });
});
