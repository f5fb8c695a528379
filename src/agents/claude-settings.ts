/**
 * The per-run Claude Code settings, `<session>/claude-settings.json`, passed as `--settings`:
 * hooks that run `engine agent-hook` at each event that tells the agent's state
 * (src/agents/agent-state.ts).
 *
 * The hook command names no session: `engine agent-hook` finds it in `ENGINE_SESSION_DIR`, which
 * the agent (and so each hook it runs) inherits. The only path in the command is the engine shim's,
 * single-quoted: Claude Code runs hook commands with a shell, and a root named `$(x) 'y'` must be
 * read as text. Its output goes nowhere and its exit is always 0, as a hook that prints or fails
 * could block a tool call (exit 2) or put text into the conversation (a UserPromptSubmit's stdout).
 */
import { join } from 'node:path';
import { writeJsonAtomic } from '../files/write-json-atomic.js';
import { shellQuote } from '../runners/runner.js';
import { sessionDir } from '../sessions/session-dir.js';
import { HOOK_STATES, type HookEvent } from './agent-state.js';

/**
 * Seconds Claude Code gives each hook before it goes on without it. It also raises SessionEnd's
 * own budget (a second and a half by default), which a loaded machine's Node start can exceed.
 */
export const HOOK_TIMEOUT_SECONDS = 10;

/** The hidden subcommand the hooks run. */
export const AGENT_HOOK_COMMAND = 'agent-hook';

export function claudeSettingsPath(dir: string): string {
  return sessionDir(dir).claudeSettings;
}

/**
 * The hook events registered for a profile. Print mode answers a PermissionRequest itself, at
 * once, with a denial (nobody can be asked), so there it is no wait for a human and is left out.
 */
export function hookEvents(kind: 'claude' | 'claude-print'): HookEvent[] {
  const events = Object.keys(HOOK_STATES) as HookEvent[];
  return kind === 'claude' ? events : events.filter((event) => event !== 'PermissionRequest');
}

export function hookCommand(engineBinDir: string): string {
  return `${shellQuote(join(engineBinDir, 'engine'))} ${AGENT_HOOK_COMMAND} >/dev/null 2>&1 || true`;
}

/** The settings object: one command hook per event, for every tool or notification type. */
export function claudeSettings(
  kind: 'claude' | 'claude-print',
  engineBinDir: string,
): { hooks: Record<string, unknown[]> } {
  const hook = {
    type: 'command',
    command: hookCommand(engineBinDir),
    timeout: HOOK_TIMEOUT_SECONDS,
  };
  return {
    hooks: Object.fromEntries(hookEvents(kind).map((event) => [event, [{ hooks: [hook] }]])),
  };
}

/** Writes the settings of one run into its session directory; resolves to their path. */
export async function writeClaudeSettings(
  sessionDir: string,
  kind: 'claude' | 'claude-print',
  engineBinDir: string,
): Promise<string> {
  const path = claudeSettingsPath(sessionDir);
  await writeJsonAtomic(path, claudeSettings(kind, engineBinDir));
  return path;
}
