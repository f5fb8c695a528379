/** The IO of a resume decision: the prior attempt's record and transcript, then `resumePlan`. */
import type { AgentKind } from '../agents/agent-profile.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { readStateRecord } from '../sessions/session-state.js';
import { resumePlan, type PriorAttempt, type ResumePlan } from './resume-plan.js';
import { transcriptExists } from './transcript.js';

/** What the prior attempt's session (`priorSession`, a ref under the root) recorded. */
export async function priorAttempt(
  root: string,
  priorSession: string | null,
): Promise<PriorAttempt | null> {
  const dir = priorSession === null ? null : resolveSessionRef(root, priorSession);
  if (dir === null) return null;
  const read = await readStateRecord(dir);
  if (!('state' in read)) return null;
  const { state } = read;
  return {
    agentSessionId: state.agentSessionId ?? null,
    cwd: state.cwd ?? null,
    requestDigest: state.requestDigest ?? null,
  };
}

/** The plan for a claim whose agent runs in `cwd` with the environment `env`. */
export async function planResume(options: {
  root: string;
  priorSession: string | null;
  agent: AgentKind;
  cwd: string;
  requestDigest: string;
  laterClaim: boolean;
  env: NodeJS.ProcessEnv;
}): Promise<ResumePlan> {
  const prior = await priorAttempt(options.root, options.priorSession);
  const id = prior?.agentSessionId ?? null;
  return resumePlan({
    agent: options.agent,
    prior,
    transcriptExists:
      id !== null && prior?.cwd != null && (await transcriptExists(options.env, prior.cwd, id)),
    cwd: options.cwd,
    requestDigest: options.requestDigest,
    laterClaim: options.laterClaim,
  });
}
