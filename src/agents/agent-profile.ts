/**
 * Agent profiles: the argument vector that starts the agent of one claim, and the Claude Code
 * session id it runs under.
 * - `claude`: interactive Claude Code in the runner's terminal (a human can attach and talk).
 * - `claude-print`: `claude -p --output-format stream-json --verbose`, for unattended runs.
 * - `custom`: the `--agent-cmd` template (src/dispatch/agent-command.ts).
 *
 * Each Claude run gets a fresh `--session-id`, so its conversation can be reopened later with
 * `claude --resume <id>`; a run that continues the prior attempt's conversation forks it into that
 * id (`--resume <prior> --fork-session`). The prompt (`<skill> <file>`) is always one argument, after `--`: a
 * request file named `$(x) 'y'.md` or `-p.md` is neither split, expanded nor read as an option.
 */
import { randomUUID } from 'node:crypto';
import { fillTemplate, usesPlaceholder } from '../dispatch/agent-command.js';
import { claudeSettingsPath } from './claude-settings.js';

export const AGENT_KINDS = ['claude', 'claude-print', 'custom'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

/**
 * The tools a `claude-print` run may use without asking: print mode cannot ask, and as root
 * Claude Code refuses `--dangerously-skip-permissions`.
 */
export const PRINT_ALLOWED_TOOLS = ['Bash', 'Edit', 'Write', 'Read'] as const;

export type AgentProfile =
  { kind: 'claude' | 'claude-print'; claudeBin: string } | { kind: 'custom'; template: string[] };

/** What one claim hands its agent. */
export interface AgentTask {
  skill: string;
  noun: string;
  file: string;
  sessionDir: string;
  tag: string;
  /** The agent session id of the prior attempt's session, when there was one and it had one. */
  priorAgentSession: string | null;
  /**
   * Continue `priorAgentSession`'s conversation (src/resume/resume-plan.ts decides); otherwise a
   * prior session is only named to the agent.
   */
  resume: boolean;
  /** The other items running now, on any host (running-note.ts); null when none. */
  running: string | null;
}

export interface AgentRun {
  argv: string[];
  /** The `--session-id` given to Claude Code; null for a custom agent without `{agent_session}`. */
  agentSessionId: string | null;
}

/** Whether the profile runs Claude Code (and so gets `engine` on its PATH). */
export function isClaudeProfile(profile: AgentProfile): boolean {
  return profile.kind !== 'custom';
}

/** The agent's argument vector for one claim, with a fresh session id where one is used. */
export function agentRun(
  profile: AgentProfile,
  task: AgentTask,
  newSessionId: () => string = randomUUID,
): AgentRun {
  if (profile.kind === 'custom') {
    const agentSessionId = usesPlaceholder(profile.template, 'agent_session')
      ? newSessionId()
      : null;
    const argv = fillTemplate(profile.template, {
      skill: task.skill,
      noun: task.noun,
      file: task.file,
      session: task.sessionDir,
      tag: task.tag,
      agent_session: agentSessionId ?? '',
      prior_agent_session: task.priorAgentSession ?? '',
      running: task.running ?? '',
    });
    return { argv, agentSessionId };
  }
  const agentSessionId = newSessionId();
  const prompt = `${task.skill} ${task.file}`;
  // The hooks that record the agent's state (claude-settings.ts), written at launch.
  const session = [
    '--session-id',
    agentSessionId,
    '--settings',
    claudeSettingsPath(task.sessionDir),
    ...priorSessionArgs(task),
    ...systemPromptArgs(task),
  ];
  // `--` ends the options: `--allowedTools` takes every word up to the next option, and would
  // swallow a prompt placed right after it.
  const argv =
    profile.kind === 'claude-print'
      ? [
          profile.claudeBin,
          ...['-p', '--output-format', 'stream-json', '--verbose', ...session],
          ...['--allowedTools', ...PRINT_ALLOWED_TOOLS, '--', prompt],
        ]
      : [profile.claudeBin, ...session, '--', prompt];
  return {
    argv,
    agentSessionId,
  };
}

/**
 * A resume forks the prior conversation into this run's own `--session-id` (Claude Code 2.1.330
 * gives the fork that id).
 */
function priorSessionArgs(task: AgentTask): string[] {
  if (task.priorAgentSession === null || !task.resume) return [];
  return ['--resume', task.priorAgentSession, '--fork-session'];
}

/**
 * What the system prompt is told, in one `--append-system-prompt`: a fresh run after a prior
 * attempt is told its id here, not in the prompt, whose words after a slash command are the
 * command's arguments; and every run, the other items running now.
 */
function systemPromptArgs(task: AgentTask): string[] {
  const prior =
    task.priorAgentSession !== null && !task.resume
      ? priorSessionNote(task.priorAgentSession)
      : null;
  const notes = [prior, task.running].filter((note): note is string => note !== null);
  return notes.length === 0 ? [] : ['--append-system-prompt', notes.join('\n\n')];
}

export function priorSessionNote(priorAgentSession: string): string {
  return (
    `A prior attempt at this request ran as Claude Code session ${priorAgentSession} and ended ` +
    'without marking it done. Only the request file as it is now tells what is done.'
  );
}
