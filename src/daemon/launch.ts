/**
 * The daemon's launch stage, in this order: the claim (the compare-and-swap of `#delegated-X` to
 * `#claimed-X` with the Session line, one write, made only over the text the item was read
 * from), the session directory, its record (`starting`), then the agent in the runner. Nothing
 * happens for an item before its claim. Also the restore of a claim an older copy was saved over
 * while its agent lives.
 */
import { hostname } from 'node:os';
import PQueue from 'p-queue';
import { agentRun, isClaudeProfile, type AgentProfile } from '../agents/agent-profile.js';
import { writeClaudeSettings } from '../agents/claude-settings.js';
import { runningNote } from '../agents/running-note.js';
import { engineBinDir, pathWith } from '../agents/engine-shim.js';
import { EngineError, messageOf, PreconditionError } from '../errors.js';
import type { WorkItem } from '../dispatch/work-items.js';
import { definedEnv } from '../runners/runner.js';
import { blockerText } from '../dispatch/depends-on.js';
import { editFile } from '../files/tag-file.js';
import { blockersOf } from '../order/read-dependencies.js';
import {
  createSessionDir,
  newSessionRef,
  resolveSessionRef,
  sessionDir,
} from '../sessions/session-dir.js';
import { isCancelled, isSessionDone, takeStartToken } from '../sessions/session-markers.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { isOpen, transitionSession } from '../sessions/session-status.js';
import { agentEnvironment, wrapperArgv } from '../sessions/wrapper-script.js';
import { restoreClaimEdit } from '../tags/lifecycle-edits.js';
import { lifecycleTag } from '../tags/tag-name.js';
import { planResume } from '../resume/prior-attempt.js';
import type { ResumePlan } from '../resume/resume-plan.js';
import { worktreeFor, type Worktree } from '../worktrees/worktree.js';
import { checkClaim } from './claim-check.js';
import { claimStoreOf, queueRootOf } from './claim-store.js';
import type { DaemonShared } from './daemon-shared.js';
import { failpoint } from './failpoint.js';
import { otherRunningItems } from './running-items.js';
import type { DaemonOptions } from './daemon-context.js';
import type { RequestReader } from './read-requests.js';
import type { PlannedItem } from './request-snapshot.js';

const LAUNCHES_AT_ONCE = 8;

/**
 * What a launch made: the session, or none (`reread`: the file is to be read again;
 * `elsewhere`: the host that holds the item's claim).
 */
export interface Launched {
  session: string | null;
  reread?: true;
  elsewhere?: string;
  /** Not claimed now (the claim store could not be reached): tried again at this time. */
  retryAt?: number;
}

/** A claimed item on its way to its agent. */
interface Claimed {
  item: PlannedItem;
  ref: string;
  dir: string;
  profile: AgentProfile;
  worktree: Worktree | null;
  /** Why the worktree could not be made: the launch fails like a failed spawn. */
  setupError: unknown;
}

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
    // A claim kept elsewhere first (git) reaches the file with a sync, never by an editor's save.
    if (!claimStoreOf(ctx).inPlace) return false;
    for (const ref of sessions.sessionsOf(item.file)) {
      const dir = resolveSessionRef(ctx.options.root, ref);
      if (dir && (await this.worksOn(dir, item))) return this.restore(item, ref);
    }
    return false;
  }

  /** Whether the session in `dir` works on this copy's item now (a live agent, not done). */
  private async worksOn(dir: string, item: WorkItem): Promise<boolean> {
    const read = await readSessionState(dir);
    // A session that followed its request to another path is that path's, not this copy's.
    if (
      !('state' in read) ||
      read.state.noun !== item.noun ||
      read.state.requestFile !== item.file ||
      !isOpen(read.state.status)
    )
      return false;
    // A cancelled session ends: an approval over its claim is a human's new one (engine cancel).
    if ((await isSessionDone(dir)) || (await isCancelled(dir))) return false;
    return (await this.shared.judge(dir, read.state)).alive;
  }

  private async restore(item: WorkItem, ref: string): Promise<boolean> {
    const { ctx } = this.shared;
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

  /** Claim first, then the session and its record, then the agent. */
  async launch(item: PlannedItem): Promise<Launched> {
    failpoint('after-read');
    // Linked since it was read: the claim would split its names (see RequestReader.hasOtherNames).
    if (await this.reader.hasOtherNames(item.file)) return { session: null };
    // Its dependencies, from the files as they are now: read again, it is held by them.
    if (await this.isBlocked(item)) return { session: null, reread: true };
    const ref = newSessionRef(item.noun, item.file, this.shared.ctx.now());
    const claimed = await this.claim(item, ref);
    if (typeof claimed === 'object') return { session: null, ...claimed };
    if (claimed !== true) return { session: null, ...(claimed === 'changed' && { reread: true }) };
    failpoint('after-claim');
    const prepared = await this.prepare(item, ref);
    return { session: await this.spawn(prepared, await this.resumePlan(prepared)) };
  }

  /** Whether a request it depends on holds it now (checked at claim time, not only at its read). */
  private async isBlocked({ file, noun, snapshot }: PlannedItem): Promise<boolean> {
    const { ctx } = this.shared;
    const blockers = await blockersOf(queueRootOf(ctx), file, snapshot.dependsOn, ctx.scan);
    if (blockers.length === 0) return false;
    ctx.log('debug', `not claiming ${file} (#delegated-${noun}): ${blockerText(blockers[0]!)}`);
    return true;
  }

  /** The claim (claim-store.ts), over the text the item was read from only. */
  private async claim(
    item: PlannedItem,
    ref: string,
  ): Promise<true | 'changed' | 'lost' | { elsewhere: string } | { retryAt: number }> {
    const { ctx } = this.shared;
    const what = `${item.file} (#delegated-${item.noun})`;
    const written = await claimStoreOf(ctx).claim(item, ref);
    if (written.kind === 'changed') {
      ctx.log(
        'debug',
        written.why === 'since-read'
          ? `not claiming ${what}: changed since it was read; reading it again`
          : // Changed while it waited to launch (a read meanwhile was not taken): read it again.
            `claim lost on ${what}: #delegated-${item.noun} no longer there`,
      );
      return 'changed';
    }
    if (written.kind === 'elsewhere') {
      ctx.log('info', `not claiming ${what}: ${written.host} holds its claim`);
      return { elsewhere: written.host };
    }
    if (written.kind === 'failed') {
      // Not claimed: the item stays approved, tried again when its file changes or at a restart;
      // one with a time to try again (a remote out of reach, races lost) is a passing state.
      ctx.log(
        written.retryAt === undefined ? 'error' : 'warn',
        `could not claim ${what}: ${written.message}`,
      );
      return written.retryAt === undefined ? 'lost' : { retryAt: written.retryAt };
    }
    this.shared.sessions.add(item.file, ref);
    ctx.log('info', `claimed ${item.file} (#claimed-${item.noun}) → ${ref}`);
    const attempt = item.snapshot.attempts + 1;
    await ctx.recordEvent({
      event: 'claimed',
      file: item.file,
      noun: item.noun,
      session: ref,
      attempt,
    });
    return true;
  }

  /** The session directory, and the worktree (--worktree, or git claims: always). */
  private async prepare(item: PlannedItem, ref: string): Promise<Claimed> {
    const { options } = this.shared.ctx;
    const dir = await createSessionDir(options.root, ref);
    failpoint('after-session-dir');
    let setupError: unknown = null;
    const agentRoot = claimStoreOf(this.shared.ctx).agentRoot;
    const worktree =
      options.worktree || agentRoot !== null
        ? await worktreeFor(agentRoot ?? options.root, item.noun, item.file).catch(
            (error: unknown) => {
              setupError = error;
              return null;
            },
          )
        : null;
    return { item, ref, dir, profile: profileOf(options), worktree, setupError };
  }

  /** Whether the claim continues the prior attempt's conversation (logged when there was one). */
  private async resumePlan({ item, ref, profile, worktree }: Claimed): Promise<ResumePlan> {
    const { ctx } = this.shared;
    const plan = await planResume({
      root: ctx.options.root,
      priorSession: item.snapshot.priorSession,
      agent: profile.kind,
      cwd: worktree?.cwd ?? ctx.options.root,
      requestDigest: item.snapshot.digest,
      laterClaim: item.snapshot.session !== null,
      env: process.env,
    });
    if (plan.priorAgentSession !== null)
      ctx.log(
        'info',
        plan.kind === 'resume'
          ? `${ref} continues the conversation of ${plan.priorAgentSession}`
          : `${ref} starts fresh (${plan.reason}); prior conversation ${plan.priorAgentSession}`,
      );
    return plan;
  }

  /** Records the session (`starting`) right before its own launch, then starts the wrapper. */
  private async spawn(claimed: Claimed, plan: ResumePlan): Promise<string | null> {
    const { ctx } = this.shared;
    const { item, ref, dir } = claimed;
    const state = this.record(claimed, plan, await this.runningNote(item));
    try {
      // Written right before its own launch, so the grace period for a wrapper to start counts
      // from the launch, not from the time spent waiting for a launch slot.
      const launched = await this.launches.add(async () => {
        state.startedAt = ctx.now().toISOString();
        await transitionSession(dir, null, 'starting', state, { events: ctx.recordEvent });
        failpoint('after-state');
        if (claimed.setupError !== null) throw claimed.setupError;
        return this.run(claimed, state);
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
      return ref;
    } catch (error) {
      return this.spawnFailed(claimed, error);
    }
  }

  /** The agent wrapper in the runner, with the agent's environment. */
  private async run({ item, dir, profile }: Claimed, state: SessionState) {
    const { ctx } = this.shared;
    const { options } = ctx;
    if (profile.kind !== 'custom')
      await writeClaudeSettings(dir, profile.kind, engineBinDir(options.root));
    return ctx.runner.launch({
      name: `agent-${item.noun}-${Math.floor(ctx.now().getTime() / 1000)}`,
      argv: wrapperArgv(dir, options.heartbeatMs, state.agentArgv),
      cwd: state.cwd ?? options.root,
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
  }

  /**
   * tmux may have started the window although the call failed: whoever takes the start token
   * first wins. If the wrapper has it, the agent runs and is watched like any other; else the
   * record is abandoned and the claim checked (requeued).
   */
  private async spawnFailed({ item, ref, dir }: Claimed, error: unknown): Promise<string | null> {
    const { ctx } = this.shared;
    const reason = `spawn failed: ${error instanceof Error ? error.message : String(error)}`;
    if (!(await takeStartToken(dir))) {
      ctx.log('warn', `${reason}, but the agent started anyway (${ref}); watching it`);
      return ref;
    }
    await transitionSession(
      dir,
      'starting',
      'abandoned',
      { reason, endedAt: ctx.now().toISOString() },
      { events: ctx.recordEvent, event: { event: 'spawn-failed', reason } },
    );
    ctx.log('error', `${reason} (${item.file})`);
    await checkClaim(ctx, item.file, item.noun);
    return null;
  }

  /** The other items running now, for the agent's prompt; a failure only leaves it out. */
  private async runningNote(item: PlannedItem): Promise<string | null> {
    try {
      return runningNote(await otherRunningItems(this.shared, item));
    } catch (error) {
      this.shared.ctx.log(
        'debug',
        `no note of the running items for ${item.file}: ${messageOf(error)}`,
      );
      return null;
    }
  }

  /** The session's record as it starts (`starting`); `running`: the running-items note. */
  private record(
    { item, ref, dir, profile, worktree }: Claimed,
    plan: ResumePlan,
    running: string | null,
  ): SessionState {
    const { options } = this.shared.ctx;
    const { argv: agentArgv, agentSessionId } = agentRun(profile, {
      skill: item.skill,
      noun: item.noun,
      file: item.file,
      sessionDir: dir,
      tag: lifecycleTag('claimed', item.noun),
      priorAgentSession: plan.priorAgentSession,
      resume: plan.kind === 'resume',
      running,
    });
    return {
      ...RECORD_START,
      host: hostname(),
      skill: item.skill,
      noun: item.noun,
      tag: lifecycleTag('claimed', item.noun),
      requestFile: item.file,
      root: options.root,
      sessionRef: ref,
      startedAt: this.shared.ctx.now().toISOString(),
      attempt: item.snapshot.attempts + 1,
      priorSession: item.snapshot.priorSession,
      runner: options.runner,
      tmux:
        options.runner === 'tmux'
          ? { socket: options.tmuxSocket, session: options.tmuxSession, window: null, pane: null }
          : null,
      agentArgv,
      agentSessionId,
      agent: profile.kind,
      cwd: worktree?.cwd ?? options.root,
      requestDigest: item.snapshot.digest,
      resumedFrom: plan.kind === 'resume' ? plan.priorAgentSession : null,
      worktree: worktree && { path: worktree.path, branch: worktree.branch },
      heartbeatMs: options.heartbeatMs,
    };
  }
}

/** What every record starts with: nothing of its processes known yet. */
const RECORD_START = {
  version: 1,
  status: 'starting',
  pid: null,
  startTicks: null,
  bootId: null,
  agentPid: null,
  agentStartTicks: null,
  exitCode: null,
  lastHeartbeat: null,
  endedAt: null,
  reason: null,
} as const;

function profileOf(options: DaemonOptions): AgentProfile {
  return options.agent === 'custom'
    ? { kind: 'custom', template: options.agentTemplate }
    : { kind: options.agent, claudeBin: options.claudeBin ?? 'claude' };
}
