/**
 * Claims crafted by hand, for tests of how the daemon judges them: a request claimed by a session
 * and that session's `.state.json` (by default a running claim of #fix).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

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

/**
 * Writes the request `name` in the root's sessions/, claimed by `ref`, and that session's record:
 * `state` as an object, raw text, or null for none. Resolves to the request file.
 */
export async function craftClaim(
  root: string,
  name: string,
  ref: string,
  state: Record<string, unknown> | string | null,
): Promise<string> {
  const file = join(root, 'sessions', name);
  await writeFile(file, `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n\nHuman text.\n`);
  const dir = join(root, ref);
  await mkdir(dir, { recursive: true });
  if (state !== null)
    await writeFile(
      join(dir, '.state.json'),
      typeof state === 'string' ? state : JSON.stringify(state),
    );
  return file;
}

/** A fresh session ref whose name encodes a claim time `ageMs` ago (UTC, like the daemon). */
export function sessionRef(ageMs: number, tag: string): string {
  const d = new Date(Date.now() - ageMs);
  const p = (n: number) => String(n).padStart(2, '0');
  return `sessions/${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}_FIX_${tag}_abcd`;
}
