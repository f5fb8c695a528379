import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planResume } from '../../src/resume/prior-attempt.js';
import { transcriptPath } from '../../src/resume/transcript.js';

const PRIOR = '11111111-2222-4333-8444-555555555555';
const REF = 'sessions/2026_11_24_030000_FIX_x_abcd';

describe('transcriptPath', () => {
  it('is under $CLAUDE_CONFIG_DIR, else $HOME/.claude, named after the directory as Claude Code names it', () => {
    expect(transcriptPath({ HOME: '/h' }, '/tmp/wd_x.y', PRIOR)).toBe(
      `/h/.claude/projects/-tmp-wd-x-y/${PRIOR}.jsonl`,
    );
    expect(transcriptPath({ HOME: '/h', CLAUDE_CONFIG_DIR: '/c' }, '/r', PRIOR)).toBe(
      `/c/projects/-r/${PRIOR}.jsonl`,
    );
  });
});

describe('planResume', () => {
  let base: string;
  let root: string;
  let home: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'engine-resume-'));
    root = join(base, 'root');
    home = join(base, 'home');
    await mkdir(join(root, REF), { recursive: true });
    await writeFile(
      join(root, REF, '.state.json'),
      JSON.stringify({
        status: 'abandoned',
        noun: 'fix',
        agentSessionId: PRIOR,
        cwd: root,
        requestDigest: 'sha256:a',
      }),
    );
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  const plan = (over: { cwd?: string; digest?: string } = {}) =>
    planResume({
      root,
      priorSession: `${REF}/`,
      agent: 'claude-print',
      cwd: over.cwd ?? root,
      requestDigest: over.digest ?? 'sha256:a',
      laterClaim: false,
      env: { HOME: home },
    });

  it('resumes only while the prior transcript exists', async () => {
    expect(await plan()).toMatchObject({ kind: 'fresh', reason: 'the prior transcript is gone' });
    const transcript = transcriptPath({ HOME: home }, root, PRIOR);
    await mkdir(join(transcript, '..'), { recursive: true });
    await writeFile(transcript, '{}\n');
    expect(await plan()).toEqual({ kind: 'resume', priorAgentSession: PRIOR });
    expect(await plan({ digest: 'sha256:b' })).toMatchObject({ kind: 'fresh' });
  });

  it('finds the transcript by the real path of a working directory reached through a symlink', async () => {
    const link = join(base, 'link');
    await symlink(root, link);
    await writeFile(
      join(root, REF, '.state.json'),
      JSON.stringify({
        status: 'abandoned',
        noun: 'fix',
        agentSessionId: PRIOR,
        cwd: link,
        requestDigest: 'sha256:a',
      }),
    );
    const transcript = transcriptPath({ HOME: home }, root, PRIOR);
    await mkdir(join(transcript, '..'), { recursive: true });
    await writeFile(transcript, '{}\n');
    expect(await plan({ cwd: link })).toEqual({ kind: 'resume', priorAgentSession: PRIOR });
  });

  it('starts fresh without a prior session record', async () => {
    await rm(join(root, REF, '.state.json'));
    expect(await plan()).toMatchObject({ kind: 'fresh', priorAgentSession: null });
  });
});
