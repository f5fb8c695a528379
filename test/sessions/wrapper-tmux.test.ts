/**
 * The agent wrapper in a real tmux window (an isolated server, `tmux -L engine-test-<random>`),
 * started by TmuxRunner as the daemon starts it: a window closing, or the server going away, hangs
 * up the agent and the wrapper records its exit; Ctrl-C reaches the agent alone; an agent that
 * ignores the hang-up outlives its window and its exit is still recorded.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TmuxRunner, isTmuxAvailable } from '../../src/runners/tmux-runner.js';
import { readWrapperRecords } from '../../src/sessions/wrapper-records.js';
import { wrapperArgv } from '../../src/sessions/wrapper-script.js';
import { waitFor } from '../helpers/wait-for.js';
import { destroyServer, killAll, processGone, testSocketName, tmux } from '../runners/support.js';

const available = await isTmuxAvailable();

let base: string;
let socket: string;
let sessions = 0;
/** Every pid a test started (outer shell, recorder, agent): killed by pid after each test. */
const pids = new Set<number>();

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'engine-wrapper-tmux-'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

interface Started {
  dir: string;
  target: string;
  panePid: number;
  wrapper: number;
  agent: number;
}

/** Starts `agentArgv` under the wrapper in a new window and waits until both are recorded. */
async function start(agentArgv: string[]): Promise<Started> {
  const dir = join(base, `session-${++sessions}`);
  await mkdir(dir);
  const runner = new TmuxRunner({ socket, session: 'wrapped' });
  const launched = await runner.launch({
    name: 'agent-fix',
    argv: wrapperArgv(dir, 100, agentArgv),
    cwd: base,
    env: {},
  });
  pids.add(launched.pid);
  const { wrapper, agent } = await waitFor(async () => {
    const r = await readWrapperRecords(dir);
    return r.wrapper && r.agent ? { wrapper: r.wrapper.pid, agent: r.agent.pid } : null;
  });
  pids.add(wrapper);
  pids.add(agent);
  return { dir, target: launched.target, panePid: launched.pid, wrapper, agent };
}

const exitOf = (dir: string) =>
  waitFor(() => readWrapperRecords(dir).then((r) => r.exit), {
    timeoutMs: 10_000,
    message: `${dir}/.exit`,
  });

/** Waits until the window shows `text` (the agent's traps are set once it printed `ready`). */
const shows = (s: Started, text: string) =>
  waitFor(async () => (await tmux(socket, 'capture-pane', '-p', '-t', s.target)).includes(text), {
    message: `the window to show ${text}`,
  });

const allGone = (s: Started) =>
  waitFor(() => [s.panePid, s.wrapper, s.agent].every(processGone), {
    timeoutMs: 10_000,
    message: 'the outer shell, the wrapper and the agent to exit',
  });

describe.skipIf(!available)('the agent wrapper in a tmux window', () => {
  beforeAll(() => {
    socket = testSocketName();
  });

  afterEach(async () => {
    killAll(pids);
    pids.clear();
    await destroyServer(socket);
  });

  it('kill-window hangs up the agent; the wrapper records 129 and exits', async () => {
    const s = await start(['sleep', '600']);
    await tmux(socket, 'kill-window', '-t', s.target);
    expect((await exitOf(s.dir)).code).toBe(129);
    await allGone(s);
  });

  it('kill-server hangs up every agent; each wrapper records 129 and exits', async () => {
    const one = await start(['sleep', '600']);
    const two = await start(['sleep', '600']);
    await tmux(socket, 'kill-server');
    expect((await exitOf(one.dir)).code).toBe(129);
    expect((await exitOf(two.dir)).code).toBe(129);
    await allGone(one);
    await allGone(two);
  });

  it('Ctrl-C reaches the agent alone; closing the window afterwards still ends it', async () => {
    // An agent that takes Ctrl-C as "stop what you are doing", not as "exit".
    const s = await start(['/bin/sh', '-c', 'trap "echo interrupted" INT; echo ready; while :; do sleep 0.1; done']);
    await shows(s, 'ready');
    await tmux(socket, 'send-keys', '-t', s.target, 'C-c');
    await shows(s, 'interrupted');
    expect([s.panePid, s.wrapper, s.agent].some(processGone)).toBe(false);
    expect(existsSync(join(s.dir, '.exit'))).toBe(false);
    await tmux(socket, 'kill-window', '-t', s.target);
    expect((await exitOf(s.dir)).code).toBe(129);
    await allGone(s);
  });

  it('an agent that ignores the hang-up outlives its window; its exit is still recorded', async () => {
    const s = await start(['/bin/sh', '-c', 'trap "" HUP; echo ready; while :; do sleep 0.1; done']);
    await shows(s, 'ready');
    await tmux(socket, 'kill-window', '-t', s.target);
    await waitFor(() => processGone(s.panePid), { message: 'the outer shell to die of the HUP' });
    expect(processGone(s.agent)).toBe(false);
    expect(processGone(s.wrapper)).toBe(false);
    // The heartbeat goes on while they live.
    const heartbeat = join(s.dir, '.heartbeat');
    const after = statSync(heartbeat).mtimeMs;
    await waitFor(() => statSync(heartbeat).mtimeMs > after, { message: 'a heartbeat after the HUP' });
    process.kill(s.agent, 'SIGTERM');
    expect((await exitOf(s.dir)).code).toBe(143);
    await allGone(s);
  });
});
