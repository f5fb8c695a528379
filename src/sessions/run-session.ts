/**
 * The agent wrapper, `engine run <skill> <file> --session <dir>`, which the daemon starts in a
 * tmux window: it records its own identity in `.state.json`, runs the agent command (an argument
 * vector, no shell), refreshes `lastHeartbeat` while the agent runs, and records the exit code.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { EngineError } from '../errors.js';
import { failpoint } from '../daemon/failpoint.js';
import { readProcessIdentity, selfIdentity } from '../process/process-identity.js';
import { appendEvent } from './event-log.js';
import { takeStartToken } from './session-markers.js';
import { readSessionState, writeSessionState, type SessionState } from './session-state.js';

export interface RunSessionOptions {
  sessionDir: string;
  skill: string;
  requestFile: string;
}

export async function runSession(options: RunSessionOptions): Promise<number> {
  const read = await readSessionState(options.sessionDir);
  if (!('state' in read)) {
    throw new EngineError(
      `No usable session record in ${options.sessionDir}: ${'malformed' in read ? read.malformed : 'error' in read ? read.error : 'missing'}`,
    );
  }
  // A session runs once: a second wrapper (a retried spawn, a human re-running the command), or
  // one the daemon already gave up on, must not start an agent. The start token decides, once.
  if (read.state.status !== 'starting' || read.state.pid !== null || !(await takeStartToken(options.sessionDir))) {
    throw new EngineError(`Session ${options.sessionDir} already ran (status ${read.state.status}); it is never reused`);
  }
  const me = selfIdentity();
  let state: SessionState = {
    ...read.state,
    status: 'running',
    pid: me.pid,
    startTicks: me.startTicks,
    bootId: me.bootId,
    host: hostname(),
    lastHeartbeat: new Date().toISOString(),
    tmux: read.state.tmux ? { ...read.state.tmux, pane: process.env.TMUX_PANE ?? null } : null,
  };
  await writeSessionState(options.sessionDir, state);
  failpoint('wrapper-after-start');

  const [program, ...args] = state.agentArgv;
  if (!program) throw new EngineError(`Session ${options.sessionDir} has no agent command`);
  const child = spawn(program, args, {
    cwd: state.root,
    stdio: 'inherit',
    env: {
      ...process.env,
      ENGINE_REQUEST_FILE: state.requestFile,
      ENGINE_SKILL: state.skill,
      ENGINE_NOUN: state.noun,
      ENGINE_SESSION_DIR: options.sessionDir,
      ENGINE_ROOT: state.root,
      ENGINE_ATTEMPT: String(state.attempt),
      ENGINE_PRIOR_SESSION: state.priorSession ?? '',
    },
  });
  // Writes are serialised so a heartbeat never lands after the final record.
  let writing: Promise<void> = Promise.resolve();
  const save = (next: SessionState) => {
    state = next;
    writing = writing.then(() => writeSessionState(options.sessionDir, next)).catch(() => undefined);
    return writing;
  };
  const spawned = new Promise<void>((resolve) => child.once('spawn', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: 127, signal: null, error }));
  });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, forward(signal));

  await Promise.race([spawned, exited]);
  if (child.pid !== undefined) {
    const agent = readProcessIdentity(child.pid);
    if (agent) await save({ ...state, agentPid: agent.pid, agentStartTicks: agent.startTicks });
  }
  const heartbeat = setInterval(() => {
    void save({ ...state, lastHeartbeat: new Date().toISOString() });
  }, state.heartbeatMs);

  const result = await exited;
  clearInterval(heartbeat);
  failpoint('wrapper-before-exit-record');
  const exitCode = result.code ?? 128 + signalNumber(result.signal);
  await save({
    ...state,
    status: 'exited',
    exitCode,
    endedAt: new Date().toISOString(),
    lastHeartbeat: new Date().toISOString(),
    reason: result.error ? `could not start the agent: ${result.error.message}` : null,
  });
  await writing;
  await appendEvent(state.root, {
    event: 'exited',
    time: new Date().toISOString(),
    file: state.requestFile,
    noun: state.noun,
    session: state.sessionRef,
    exitCode,
  }).catch(() => undefined);
  if (result.error) throw new EngineError(`Could not start the agent '${program}': ${result.error.message}`);
  return exitCode;
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return (signal && numbers[signal]) ?? 0;
}
