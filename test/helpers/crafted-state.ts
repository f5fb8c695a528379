/** A session's `.state.json` for tests that craft claims: a running claim of #fix, with overrides. */
import { hostname } from 'node:os';

/** A crafted `.state.json` record for the claim `ref` of `file`, with overrides. */
export function craftedState(
  root: string,
  file: string,
  ref: string,
  over: Record<string, unknown>,
): Record<string, unknown> {
  return {
    version: 1,
    status: 'running',
    pid: null,
    startTicks: null,
    bootId: null,
    host: hostname(),
    agentPid: null,
    agentStartTicks: null,
    skill: '/fix',
    noun: 'fix',
    tag: '#claimed-fix',
    requestFile: file,
    root,
    sessionRef: ref,
    exitCode: null,
    startedAt: new Date().toISOString(),
    lastHeartbeat: new Date().toISOString(),
    endedAt: null,
    attempt: 1,
    priorSession: null,
    runner: 'tmux',
    tmux: null,
    agentArgv: ['true'],
    heartbeatMs: 1000,
    reason: null,
    ...over,
  };
}
