/**
 * The daemon's launch stage, in this order: the claim (the compare-and-swap of `#delegated-X` to
 * `#claimed-X` with the Session line, one write), the session directory, its record
 * (`starting`), then the agent in the runner. Nothing happens for an item before its claim. Also
 * the restore of a claim an older copy was saved over while its agent lives.
 */
import { hostname } from 'node:os';
import PQueue from 'p-queue';
import { agentRun, isClaudeProfile, type AgentProfile } from '../agents/agent-profile.js';
import { writeClaudeSettings } from '../agents/claude-settings.js';
import { engineBinDir, pathWith } from '../agents/engine-shim.js';
import { EngineError, messageOf, PreconditionError } from '../errors.js';
import type { WorkItem } from '../dispatch/work-items.js';
import { definedEnv } from '../runners/runner.js';
import { editFile } from '../files/tag-file.js';
import {
  createSessionDir,
  newSessionRef,
  resolveSessionRef,
  sessionDir,
} from '../sessions/session-dir.js';
import { isSessionDone, takeStartToken } from '../sessions/session-markers.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { isOpen, transitionSession } from '../sessions/session-status.js';
import { agentEnvironment, wrapperArgv } from '../sessions/wrapper-script.js';
import {
  claimEdit,
  lastPriorSessionOf,
  restoreClaimEdit,
  sessionReferenceOf,
} from '../tags/lifecycle-edits.js';
import { attemptsSoFar, recoveryRecordsOf } from '../tags/recovery-entries.js';
import { scanTags } from '../tags/scan-tags.js';
import { lifecycleTag } from '../tags/tag-name.js';
import { planResume } from '../resume/prior-attempt.js';
import { requestDigest } from '../resume/request-digest.js';
import { worktreeFor, type Worktree } from '../worktrees/worktree.js';
import { checkClaim } from './claim-check.js';
import type { DaemonShared } from './daemon-shared.js';
import { failpoint } from './failpoint.js';
import type { DaemonOptions } from './daemon-context.js';
import type { RequestReader } from './read-requests.js';

const LAUNCHES_AT_ONCE = 8;

export class Launcher {
  /**
   * Launches under way at once. Each waits on a record's fsync and on tmux, not on this process:
   * one at a time, a burst of 500 items started 6 agents a second on an idle 2-core machine.
   */
  private readonly launches = new PQueue({ concurrency: LAUNCHES_AT_ONCE });

  constructor(
    private readonly shared: DaemonShared,
    private readonly reader: RequestReader,
  ) {}

  /**
   * An editor that read before our claim and saved after it puts `#delegated-X` back while the
   * claim's agent lives. Restore the claim; never start a second agent. True when restored.
   */
  async restoreClaim(item: WorkItem): Promise<boolean> {
    const { ctx, sessions } = this.shared;
    for (const ref of sessions.sessionsOf(item.file)) {
      const dir = resolveSessionRef(ctx.options.root, ref);
      if (!dir) continue;
      const read = await readSessionState(dir);
      // A session that followed its request to another path is that path's, not this copy's.
      if (
        !('state' in read) ||
        read.state.noun !== item.noun ||
        read.state.requestFile !== item.file ||
        !isOpen(read.state.status)
      )
        continue;
      if (await isSessionDone(dir)) continue;
      if (!(await this.shared.judge(dir, read.state)).alive) continue;
      try {
        await editFile(item.file, (text) => restoreClaimEdit(text, item.noun, ref));
      } catch (error) {
        if (error instanceof PreconditionError) return true;
        throw new EngineError(
          `could not restore the claim on ${item.file} (#claimed-${item.noun}, ${ref}): ${messageOf(error)}`,
          { cause: error },
        );
      }
      ctx.log(
        'warn',
        `restored the claim on ${item.file}: an older copy was saved over it while ${ref} runs`,
      );
      await ctx.recordEvent({
        event: 'claim-restored',
        file: item.file,
        noun: item.noun,
        session: ref,
      });
      return true;
    }
    return false;
  }

  /** Claim first, then the session and its record, then the agent. Returns the session ref. */
  async launch(item: WorkItem): Promise<string | null> {
    const { ctx } = this.shared;
    const { options } = ctx;
    failpoint('after-read');
    // A live session already on this item (an editor saved an older copy over its claim):
    // restore that claim instead of starting a second agent.
    if (await this.restoreClaim(item)) return null;
    // Linked since it was read: checked again right before the claim.
    if (await this.reader.hasOtherNames(item.file)) return null;
    const ref = newSessionRef(item.noun, item.file, ctx.now());
    let attempt = 1;
    let priorSession: string | null = null;
    let digest = '';
    let laterClaim = false;
    try {
      await editFile(item.file, (text) => {
        // One parse for what the claim reads; the claim's edit checks its own result.
        const scan = scanTags(text);
        attempt = attemptsSoFar(recoveryRecordsOf(scan)) + 1;
        priorSession = lastPriorSessionOf(scan);
        digest = requestDigest(text, scan);
        laterClaim = sessionReferenceOf(scan) !== null;
        return claimEdit(text, item.noun, ref);
      });
    } catch (error) {
      if (error instanceof PreconditionError) {
        ctx.log('debug', `claim lost on ${item.file} (#delegated-${item.noun} no longer there)`);
        return null;
      }
      // Not claimed: the item stays approved, tried again when its file changes or at a restart.
      ctx.log(
        'error',
        `could not claim ${item.file} (#delegated-${item.noun}): ${messageOf(error)}`,
      );
      return null;
    }
    failpoint('after-claim');
    this.shared.sessions.add(item.file, ref);
    ctx.log('info', `claimed ${item.file} (#claimed-${item.noun}) → ${ref}`);
    await ctx.recordEvent({
      event: 'claimed',
      file: item.file,
      noun: item.noun,
      session: ref,
      attempt,
    });
    const dir = await createSessionDir(options.root, ref);
    failpoint('after-session-dir');
    const now = ctx.now().toISOString();
    const profile = profileOf(options);
    // A worktree that cannot be made ends the claim like a failed spawn (below).
    let worktree: Worktree | null = null;
    let setupError: unknown = null;
    if (options.worktree) {
      worktree = await worktreeFor(options.root, item.noun, item.file).catch((error: unknown) => {
        setupError = error;
        return null;
      });
    }
    const cwd = worktree?.cwd ?? options.root;
    const plan = await planResume({
      root: options.root,
      priorSession,
      agent: profile.kind,
      cwd,
      requestDigest: digest,
      laterClaim,
      env: process.env,
    });
    if (plan.priorAgentSession !== null)
      ctx.log(
        'info',
        plan.kind === 'resume'
          ? `${ref} continues the conversation of ${plan.priorAgentSession}`
          : `${ref} starts fresh (${plan.reason}); prior conversation ${plan.priorAgentSession}`,
      );
    const { argv: agentArgv, agentSessionId } = agentRun(profile, {
      skill: item.skill,
      noun: item.noun,
      file: item.file,
      sessionDir: dir,
      tag: lifecycleTag('claimed', item.noun),
      priorAgentSession: plan.priorAgentSession,
      resume: plan.kind === 'resume',
    });
    const state: SessionState = {
      version: 1,
      status: 'starting',
      pid: null,
      startTicks: null,
      bootId: null,
      host: hostname(),
      agentPid: null,
      agentStartTicks: null,
      skill: item.skill,
      noun: item.noun,
      tag: lifecycleTag('claimed', item.noun),
      requestFile: item.file,
      root: options.root,
      sessionRef: ref,
      exitCode: null,
      startedAt: now,
      lastHeartbeat: null,
      endedAt: null,
      attempt,
      priorSession,
      runner: options.runner,
      tmux:
        options.runner === 'tmux'
          ? { socket: options.tmuxSocket, session: options.tmuxSession, window: null, pane: null }
          : null,
      agentArgv,
      agentSessionId,
      agent: profile.kind,
      cwd,
      requestDigest: digest,
      resumedFrom: plan.kind === 'resume' ? plan.priorAgentSession : null,
      worktree: worktree && { path: worktree.path, branch: worktree.branch },
      heartbeatMs: options.heartbeatMs,
      reason: null,
    };
    try {
      // The record is written right before its own launch, so the grace period for a wrapper to
      // start counts from the launch, not from the time spent waiting for a launch slot.
      const launched = await this.launches.add(async () => {
        state.startedAt = ctx.now().toISOString();
        await transitionSession(dir, null, 'starting', state, { events: ctx.recordEvent });
        failpoint('after-state');
        if (setupError !== null) throw setupError;
        if (profile.kind !== 'custom')
          await writeClaudeSettings(dir, profile.kind, engineBinDir(options.root));
        return ctx.runner.launch({
          name: `agent-${item.noun}-${Math.floor(ctx.now().getTime() / 1000)}`,
          argv: wrapperArgv(dir, options.heartbeatMs, agentArgv),
          cwd,
          // The daemon's environment as it is now, not the tmux server's (docs/DAEMON.md).
          env: {
            ...definedEnv(process.env),
            ...agentEnvironment(state, dir),
            PATH: isClaudeProfile(profile)
              ? pathWith(engineBinDir(options.root), process.env.PATH)
              : (process.env.PATH ?? ''),
          },
          logFile: sessionDir(dir).agentLog,
        });
      });
      failpoint('after-spawn');
      ctx.log('info', `spawned ${launched.windowName} (${launched.target}) for ${item.file}`);
      await ctx.recordEvent({
        event: 'spawned',
        file: item.file,
        noun: item.noun,
        session: ref,
        pid: launched.pid,
        window: launched.windowName,
        target: launched.target,
      });
    } catch (error) {
      const reason = `spawn failed: ${error instanceof Error ? error.message : String(error)}`;
      // tmux may have started the window although the call failed: whoever takes the start
      // token first wins. If the wrapper has it, the agent runs and is watched like any other.
      if (!(await takeStartToken(dir))) {
        ctx.log('warn', `${reason}, but the agent started anyway (${ref}); watching it`);
        return ref;
      }
      await transitionSession(
        dir,
        'starting',
        'abandoned',
        { reason, endedAt: now },
        { events: ctx.recordEvent, event: { event: 'spawn-failed', reason } },
      );
      ctx.log('error', `${reason} (${item.file})`);
      await checkClaim(ctx, item.file, item.noun);
      return null;
    }
    return ref;
  }
}

function profileOf(options: DaemonOptions): AgentProfile {
  return options.agent === 'custom'
    ? { kind: 'custom', template: options.agentTemplate }
    : { kind: options.agent, claudeBin: options.claudeBin ?? 'claude' };
}
