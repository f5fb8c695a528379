import { describe, expect, it } from 'vitest';
import { resumePlan, type ResumeInputs } from '../../src/resume/resume-plan.js';

const PRIOR = '11111111-2222-4333-8444-555555555555';
const inputs = (over: Partial<ResumeInputs> = {}): ResumeInputs => ({
  agent: 'claude-print',
  prior: { agentSessionId: PRIOR, cwd: '/r', requestDigest: 'sha256:a' },
  transcriptExists: true,
  cwd: '/r',
  requestDigest: 'sha256:a',
  laterClaim: false,
  ...over,
});

describe('resumePlan', () => {
  it('resumes when the transcript exists, the directory is the same and the request unchanged', () => {
    expect(resumePlan(inputs())).toEqual({ kind: 'resume', priorAgentSession: PRIOR });
    expect(resumePlan(inputs({ agent: 'claude' })).kind).toBe('resume');
  });

  it.each([
    ['a custom agent', { agent: 'custom' as const }, 'a custom agent is not resumed'],
    ['a gone transcript', { transcriptExists: false }, 'the prior transcript is gone'],
    ['another directory', { cwd: '/r/.engine-worktrees/fix/x' }, 'another directory'],
    ['a changed request', { requestDigest: 'sha256:b' }, 'the request text changed'],
    ['a later claim that ended (done)', { laterClaim: true }, 'a later claim ended'],
  ])('starts fresh, naming the prior session, after %s', (_, over, reason) => {
    const plan = resumePlan(inputs(over));
    expect(plan).toMatchObject({ kind: 'fresh', priorAgentSession: PRIOR });
    expect(plan.kind === 'fresh' && plan.reason).toContain(reason);
  });

  it('starts fresh without a prior session, or with a prior record that lacks the new fields', () => {
    expect(resumePlan(inputs({ prior: null }))).toEqual({
      kind: 'fresh',
      priorAgentSession: null,
      reason: 'no prior Claude Code session',
    });
    const old = { agentSessionId: PRIOR, cwd: null, requestDigest: null };
    expect(resumePlan(inputs({ prior: old })).kind).toBe('fresh');
    const noId = { agentSessionId: null, cwd: '/r', requestDigest: 'sha256:a' };
    expect(resumePlan(inputs({ prior: noId }))).toMatchObject({ priorAgentSession: null });
  });
});
