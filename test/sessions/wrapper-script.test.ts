/**
 * The agent wrapper, a constant sh script (src/sessions/wrapper-script.ts), run directly: the
 * start token lets a session run once; the pids it records are the wrapper's and the agent's own
 * (with their start ticks, so the daemon's liveness check names those very processes); the exit
 * code is recorded also when the agent is killed; hostile session directories and arguments are
 * plain data; its failpoints kill it at the step they name; its heartbeat ends with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkLiveness, readProcessIdentity } from '../../src/process/process-identity.js';
import { takeStartToken } from '../../src/sessions/session-markers.js';
import { readSessionState, type SessionState } from '../../src/sessions/session-state.js';
import { transitionSession } from '../../src/sessions/session-status.js';
import { readWrapperRecords } from '../../src/sessions/wrapper-records.js';
import { wrapperArgv } from '../../src/sessions/wrapper-script.js';
import { waitFor } from '../helpers/wait-for.js';

let base: string;
let agentScript: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'engine-wrapper-'));
  agentScript = join(base, 'agent.mjs');
  // Records its pid and argv, waits for a release file when told to, exits with AGENT_CODE.
  await writeFile(
    agentScript,
    `import { existsSync, writeFileSync } from 'node:fs';
const env = process.env;
writeFileSync(env.AGENT_OUT, JSON.stringify({ pid: process.pid, argv: process.argv.slice(2) }));
while (env.AGENT_RELEASE && !existsSync(env.AGENT_RELEASE)) await new Promise((r) => setTimeout(r, 20));
process.exit(Number(env.AGENT_CODE ?? 0));
`,
  );
});

afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  dir: string;
  out: string;
  release: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

let runs = 0;

/**
 * Starts the wrapper on a fresh session directory (named `name`; created unless `create` is
 * false), in its own process group.
 */
async function runWrapper(
  options: {
    name?: string;
    args?: string[];
    env?: Record<string, string>;
    dir?: string;
    create?: boolean;
  } = {},
): Promise<Run> {
  const dir = options.dir ?? join(base, `${++runs} ${options.name ?? 'session'}`);
  if (options.create !== false) await mkdir(dir, { recursive: true });
  const out = join(dir, 'agent-out.json');
  const release = join(dir, 'release');
  const [shell, ...args] = wrapperArgv(dir, 100, [
    process.execPath,
    agentScript,
    ...(options.args ?? []),
  ]);
  const child = spawn(shell!, args, {
    cwd: base,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, AGENT_OUT: out, AGENT_RELEASE: release, ...options.env },
  });
  children.push(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, dir, out, release, exited };
}

const agentOf = (run: Run) =>
  waitFor(() => existsSync(run.out) && (JSON.parse(readFileSync(run.out, 'utf8')) as AgentOut));

interface AgentOut {
  pid: number;
  argv: string[];
}

function startingRecord(dir: string): SessionState {
  return {
    version: 1,
    status: 'starting',
    pid: null,
    startTicks: null,
    bootId: null,
    host: 'h',
    agentPid: null,
    agentStartTicks: null,
    skill: '/fix',
    noun: 'fix',
    tag: '#claimed-fix',
    requestFile: join(dir, 'REQ.md'),
    root: dir,
    sessionRef: 'sessions/x',
    exitCode: null,
    startedAt: new Date().toISOString(),
    lastHeartbeat: null,
    endedAt: null,
    attempt: 1,
    priorSession: null,
    runner: 'tmux',
    tmux: null,
    agentArgv: ['x'],
    heartbeatMs: 100,
    reason: null,
  };
}

/** The parent pid of `pid`: field 4 of /proc/<pid>/stat. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** True when no process runs under `pid`: no /proc entry, or a zombie. */
function processGone(pid: number): boolean {
  const identity = readProcessIdentity(pid);
  return identity === null || checkLiveness(identity) !== 'alive';
}

/** Pids of processes whose command line names `dir` (the wrapper and its heartbeat loop). */
function processesOf(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(dir))
        pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}

describe('the agent wrapper', () => {
  it('records its own and the agent’s identity, then the exit code; the merged record follows', async () => {
    const run = await runWrapper({ env: { AGENT_CODE: '7' } });
    await transitionSession(run.dir, null, 'starting', startingRecord(run.dir), {
      events: async () => undefined,
    });
    const agent = await agentOf(run);
    const records = await waitFor(async () => {
      const r = await readWrapperRecords(run.dir);
      return r.wrapper && r.agent ? r : null;
    });
    // The recorded wrapper is the recorder, a child of the shell that was started.
    const recorder = records.wrapper!.pid;
    expect(parentOf(recorder)).toBe(run.child.pid);
    const wrapperNow = readProcessIdentity(recorder)!;
    const agentNow = readProcessIdentity(agent.pid)!;
    expect(parentOf(agent.pid)).toBe(recorder);
    expect(records.wrapper).toMatchObject({
      pid: recorder,
      startTicks: wrapperNow.startTicks,
      bootId: wrapperNow.bootId,
      host: wrapperNow.host,
    });
    expect(records.agent).toEqual({ pid: agent.pid, startTicks: agentNow.startTicks });
    expect(records.exit).toBeNull();
    const running = await readSessionState(run.dir);
    expect('state' in running && running.state).toMatchObject({
      status: 'running',
      pid: recorder,
      agentPid: agent.pid,
    });
    if (!('state' in running)) return;
    const s = running.state;
    const identity = { pid: s.pid!, startTicks: s.startTicks!, bootId: s.bootId!, host: s.host };
    expect(checkLiveness(identity)).toBe('alive');
    expect(
      checkLiveness({ ...identity, pid: s.agentPid!, startTicks: s.agentStartTicks! }),
    ).toBe('alive');

    await writeFile(run.release, '');
    expect((await run.exited).code).toBe(7);
    const ended = await readSessionState(run.dir);
    expect('state' in ended && ended.state).toMatchObject({ status: 'exited', exitCode: 7 });
    expect('state' in ended && Date.parse(ended.state.endedAt!)).toBeGreaterThan(0);
  });

  it('runs a session at most once: a second start, or one after the daemon took the token, is refused', async () => {
    const first = await runWrapper({ env: { AGENT_RELEASE: '' } });
    expect((await first.exited).code).toBe(0);
    const again = await runWrapper({ dir: first.dir, env: { AGENT_OUT: join(base, 'never-1') } });
    const second = await again.exited;
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/already ran/);

    const dir = join(base, 'taken by the daemon');
    await mkdir(dir);
    expect(await takeStartToken(dir)).toBe(true);
    const late = await runWrapper({ dir, env: { AGENT_OUT: join(base, 'never-2') } });
    expect((await late.exited).code).toBe(1);
    expect(existsSync(join(base, 'never-1')) || existsSync(join(base, 'never-2'))).toBe(false);
    expect(existsSync(join(dir, '.wrapper'))).toBe(false);

    const missing = await runWrapper({ dir: join(base, 'no such session'), create: false });
    const refused = await missing.exited;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/cannot create the start token/);
  });

  it('passes hostile session directories and arguments as data, never as code', async () => {
    const hostile = [
      '$(touch PWNED-1)',
      '`touch PWNED-2`',
      `it's "q"; touch PWNED-3`,
      'new\nline; touch PWNED-4',
      '-n',
      '--',
      '*',
      '$HOME ~ %1 #{pane_id}',
      '',
      'ends with;',
    ];
    const run = await runWrapper({
      name: `$(touch PWNED-5) \`touch PWNED-6\` '"; -x\n*`,
      args: hostile,
      env: { AGENT_RELEASE: '' },
    });
    expect((await run.exited).code).toBe(0);
    const agent = await agentOf(run);
    expect(agent.argv).toEqual(hostile);
    const records = await readWrapperRecords(run.dir);
    expect(records.agent?.pid).toBe(agent.pid);
    expect(records.exit?.code).toBe(0);
    const pwned = [base, run.dir, process.cwd()].flatMap((dir) =>
      readdirSync(dir).filter((name) => name.startsWith('PWNED')),
    );
    expect(pwned).toEqual([]);
  });

  it('outlives signals to its own pid, and records 128+N when the agent is killed', async () => {
    const run = await runWrapper();
    const agent = await agentOf(run);
    const recorder = (await waitFor(() => readWrapperRecords(run.dir).then((r) => r.wrapper))).pid;
    await waitFor(() => existsSync(join(run.dir, '.agent')));
    // POSIX sh runs a trap only once its foreground child has ended: nothing is passed on.
    for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.kill(recorder, signal);
    expect(checkLiveness(readProcessIdentity(agent.pid)!)).toBe('alive');
    process.kill(agent.pid, 'SIGKILL');
    expect((await run.exited).code).toBe(137);
    expect((await readWrapperRecords(run.dir)).exit?.code).toBe(137);
  });

  it.each([
    ['Ctrl-C', 'SIGINT', 130],
    ['Ctrl-\\', 'SIGQUIT', 131],
  ] as const)('leaves %s (%s to the group) to the agent, and ends with its code', async (_, signal, code) => {
    const run = await runWrapper();
    await agentOf(run);
    await waitFor(() => existsSync(join(run.dir, '.agent')));
    process.kill(-run.child.pid!, signal);
    // The outer shell was not killed by the signal (on a terminal it would hang up the agent).
    expect(await run.exited).toMatchObject({ code, signal: null });
    expect((await readWrapperRecords(run.dir)).exit?.code).toBe(code);
  });

  it('on a hang-up of the group the outer shell dies, the agent ends and its exit is recorded', async () => {
    const run = await runWrapper();
    await agentOf(run);
    const recorder = (await waitFor(() => readWrapperRecords(run.dir).then((r) => r.wrapper))).pid;
    await waitFor(() => existsSync(join(run.dir, '.agent')));
    process.kill(-run.child.pid!, 'SIGHUP');
    expect((await run.exited).signal).toBe('SIGHUP');
    const exit = await waitFor(() => readWrapperRecords(run.dir).then((r) => r.exit));
    expect(exit.code).toBe(129);
    await waitFor(() => processGone(recorder), { message: 'the recorder to exit' });
  });

  it('touches .heartbeat while the agent runs; its heartbeat loop ends when the wrapper is killed', async () => {
    const run = await runWrapper();
    const agent = await agentOf(run);
    const heartbeat = join(run.dir, '.heartbeat');
    const first = await waitFor(() => existsSync(heartbeat) && statSync(heartbeat).mtimeMs);
    await waitFor(() => statSync(heartbeat).mtimeMs > first, { message: 'a second heartbeat' });
    expect(processesOf(run.dir).length).toBeGreaterThanOrEqual(2);
    process.kill((await readWrapperRecords(run.dir)).wrapper!.pid, 'SIGKILL');
    process.kill(agent.pid, 'SIGKILL');
    await waitFor(() => processesOf(run.dir).length === 0, {
      message: 'the heartbeat loop to end',
    });
  });

  it.each([
    ['wrapper-after-start', { wrapper: true, agent: false, exit: false }],
    ['wrapper-before-exit-record', { wrapper: true, agent: true, exit: false }],
  ] as const)('ENGINE_FAILPOINT=%s kills it with SIGKILL at that step', async (step, want) => {
    const run = await runWrapper({ env: { ENGINE_FAILPOINT: step, AGENT_RELEASE: '' } });
    // The outer shell reports its recorder killed by signal 9.
    expect((await run.exited).code).toBe(137);
    const records = await readWrapperRecords(run.dir);
    expect({
      wrapper: records.wrapper !== null,
      agent: records.agent !== null,
      exit: records.exit !== null,
    }).toEqual(want);
    expect(existsSync(run.out)).toBe(want.agent);
  });
});
