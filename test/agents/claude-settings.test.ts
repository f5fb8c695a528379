/**
 * The per-run Claude Code settings: their hooks, and the hook command run the way Claude Code runs
 * it (`/bin/sh -c <command>`, the hook input on stdin, the agent's environment) against the real
 * built `engine`, from a root and a session directory whose names hold shell syntax.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  claudeSettings,
  hookCommand,
  HOOK_TIMEOUT_SECONDS,
  writeClaudeSettings,
} from '../../src/agents/claude-settings.js';
import { writeEngineShim } from '../../src/agents/engine-shim.js';
import { HOOK_STATES } from '../../src/agents/agent-state.js';
import { sessionDir } from '../../src/sessions/session-dir.js';
import { CLI, runProcess } from '../helpers/run-cli.js';

const HOSTILE = `it's a $(touch pwned) "x" \`touch y\` ;touch z; \\ $HOME`;

/** Runs a hook command as Claude Code does; resolves to its exit code and output. */
function runHook(command: string, input: string, env: Record<string, string>, cwd: string) {
  return runProcess('/bin/sh', ['-c', command], {
    cwd,
    env: { ...process.env, ...env },
    input,
  });
}

describe('claude settings', () => {
  let base: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'engine-claude-settings-'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('hooks every state event for the interactive profile, PermissionRequest only there', () => {
    const interactive = claudeSettings('claude', '/r/sessions/.engine/bin');
    const print = claudeSettings('claude-print', '/r/sessions/.engine/bin');
    expect(Object.keys(interactive.hooks).sort()).toEqual(Object.keys(HOOK_STATES).sort());
    expect(Object.keys(print.hooks).sort()).toEqual(
      Object.keys(HOOK_STATES)
        .filter((e) => e !== 'PermissionRequest')
        .sort(),
    );
    expect(interactive.hooks.Stop).toEqual([
      {
        hooks: [
          {
            type: 'command',
            command: `'/r/sessions/.engine/bin/engine' agent-hook >/dev/null 2>&1 || true`,
            timeout: HOOK_TIMEOUT_SECONDS,
          },
        ],
      },
    ]);
  });

  it('the hook command injects nothing from a hostile root or session name, prints nothing, exits 0', async () => {
    const root = join(base, HOSTILE);
    const session = join(root, 'sessions', `fix-${HOSTILE}`);
    await mkdir(session, { recursive: true });
    const bin = await writeEngineShim(root, process.execPath, CLI);
    const settingsPath = await writeClaudeSettings(session, 'claude', bin);
    const settings = JSON.parse(await readFile(settingsPath, 'utf8')) as ReturnType<
      typeof claudeSettings
    >;
    const command = (settings.hooks.PreToolUse?.[0] as { hooks: Array<{ command: string }> })
      .hooks[0]?.command;
    expect(command).toBe(hookCommand(bin));

    const input = JSON.stringify({
      session_id: 'x',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
    });
    const run = await runHook(String(command), input, { ENGINE_SESSION_DIR: session }, base);
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(JSON.parse(await readFile(sessionDir(session).agentState, 'utf8'))).toMatchObject({
      state: 'working',
      event: 'PreToolUse',
    });
    // Nothing ran from the names: no file was created by them, here or in the root.
    for (const dir of [base, root]) {
      for (const name of ['pwned', 'y', 'z']) expect(existsSync(join(dir, name))).toBe(false);
    }
    expect((await readdir(base)).sort()).toEqual([HOSTILE]);
  });

  it('exits 0 and prints nothing when engine is missing, the input is not JSON, or there is no session', async () => {
    const missing = await runHook(hookCommand(join(base, 'no-such-dir')), '{}', {}, base);
    expect(missing).toEqual({ code: 0, stdout: '', stderr: '' });
    const bin = await writeEngineShim(base, process.execPath, CLI);
    const notJson = await runHook(hookCommand(bin), 'not json', { ENGINE_SESSION_DIR: base }, base);
    expect(notJson).toEqual({ code: 0, stdout: '', stderr: '' });
    const noSession = await runHook(
      hookCommand(bin),
      JSON.stringify({ hook_event_name: 'Stop' }),
      { ENGINE_SESSION_DIR: join(base, 'gone') },
      base,
    );
    expect(noSession).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(sessionDir(base).agentState)).toBe(false);
  });

  it('engine agent-hook itself exits 0 and prints nothing, whatever it is given', async () => {
    const run = await runHook(
      `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} agent-hook`,
      'garbage',
      { ENGINE_SESSION_DIR: '' },
      base,
    );
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
