/**
 * Whether a claim continues the prior attempt's Claude Code conversation or starts fresh. A
 * resumed attempt runs `claude --resume <prior> --fork-session --session-id <new>`: a new session
 * (its own id, its own transcript) that starts with the prior conversation's messages, which
 * stays as it was. It resumes only when all of these hold, and starts fresh otherwise:
 * - the profile runs Claude Code, and the prior attempt recorded a Claude Code session id;
 * - the prior attempt is the item's last one (a finished one is never continued);
 * - that session's transcript still exists (Claude Code deletes old ones at start-up);
 * - the new attempt runs in the directory the prior one ran in (Claude Code finds a conversation
 *   by its directory, and a resume elsewhere fails or works in the wrong place);
 * - the request text is what the prior attempt was asked (tags/request-digest.ts).
 * Completion is never taken from the conversation: only the tag in the file as it is now counts.
 */
import type { AgentKind } from '../agents/agent-profile.js';

/** What the prior attempt's `.state.json` recorded; fields absent from older records are null. */
export interface PriorAttempt {
  agentSessionId: string | null;
  cwd: string | null;
  requestDigest: string | null;
}

export interface ResumeInputs {
  agent: AgentKind;
  prior: PriorAttempt | null;
  /** Whether the prior session's transcript exists (looked up in the prior attempt's directory). */
  transcriptExists: boolean;
  /** The directory this attempt's agent will run in. */
  cwd: string;
  /** The digest of this attempt's request text. */
  requestDigest: string;
  /**
   * The request still carried a Session line when claimed: a claim after the last requeue ended
   * another way (done, then approved again), so the prior attempt is not the last one.
   */
  laterClaim: boolean;
}

export type ResumePlan =
  | { kind: 'resume'; priorAgentSession: string }
  /** `priorAgentSession`: the prior session to name to the agent, when there was one. */
  | { kind: 'fresh'; priorAgentSession: string | null; reason: string };

/** The plan for a claim. Pure. */
export function resumePlan(inputs: ResumeInputs): ResumePlan {
  const { prior } = inputs;
  const priorAgentSession = prior?.agentSessionId ?? null;
  const fresh = (reason: string): ResumePlan => ({ kind: 'fresh', priorAgentSession, reason });
  if (inputs.agent === 'custom') return fresh('a custom agent is not resumed');
  if (prior === null || priorAgentSession === null) return fresh('no prior Claude Code session');
  if (inputs.laterClaim) return fresh('a later claim ended after the prior attempt');
  if (!inputs.transcriptExists) return fresh('the prior transcript is gone');
  if (prior.cwd !== inputs.cwd) return fresh('the prior attempt ran in another directory');
  if (prior.requestDigest !== inputs.requestDigest) return fresh('the request text changed');
  return { kind: 'resume', priorAgentSession };
}
