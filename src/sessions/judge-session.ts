/**
 * The one judge of a session: does it still work on its item (its wrapper alive, or its agent,
 * or still starting), and if not, why not. The claim check and the reaper, claim restore, the
 * daemon's followers, `engine status` and `engine attach` all ask it, so they cannot disagree.
 * Pure: the time is given and the operating system is asked through the injected probe.
 */
import { isHeartbeatStale } from '../process/heartbeat.js';
import {
  checkLiveness,
  describeLiveness,
  isAlive,
  type ProcessIdentity,
  type ProcProbe,
} from '../process/process-identity.js';
import { claimTime } from './session-dir.js';
import type { SessionState } from './session-state.js';

export interface JudgeOptions {
  /** How long a claim may lack a session record, and a session a wrapper (`--claim-grace-ms`). */
  claimGraceMs: number;
  /** How long a session on another host may go without a heartbeat (`--stale-after`). */
  staleAfterMs: number;
}

/** The defaults of `--claim-grace-ms` and `--stale-after` (settings/setting-table.ts). */
export const DEFAULT_JUDGE_OPTIONS: JudgeOptions = {
  claimGraceMs: 60_000,
  staleAfterMs: 45 * 60_000,
};

/** What the session directory holds beside `.state.json` that the judgement needs. */
export interface SessionRecords {
  /** When the start token was taken (ms since the epoch); null while nobody has taken it. */
  startTokenAt: number | null;
}

export type SessionVerdict =
  | {
      alive: true;
      /**
       * `wrapper`: the wrapper runs. `agent`: the wrapper is gone and its agent runs on (it
       * outlives a wrapper killed on its own). `heartbeat`: recorded on another host, whose
       * heartbeat is fresh. `starting`: no wrapper recorded yet, within the grace period.
       */
      by: 'wrapper' | 'agent' | 'heartbeat' | 'starting';
      /** One line for humans. */
      detail: string;
    }
  | {
      alive: false;
      reason: string;
      /**
       * No wrapper has taken the start token yet, so one may still start an agent: whoever acts
       * on this verdict takes the token first, and if the wrapper has it, judges again with its
       * time.
       */
      mayStart: boolean;
    };

/** Judges a session from its record (as merged with the wrapper's files) at `now`. */
export function judgeSession(
  state: SessionState,
  records: SessionRecords,
  now: Date,
  options: JudgeOptions,
  probe: ProcProbe,
): SessionVerdict {
  if (state.status === 'exited') {
    return dead(
      `agent exited with code ${state.exitCode ?? 'unknown'} without marking #done-${state.noun}`,
    );
  }
  if (state.status === 'abandoned') return dead(state.reason ?? 'session was abandoned');
  if (state.pid === null || state.startTicks === null || state.bootId === null) {
    const launched = Date.parse(state.startedAt) || claimTime(state.sessionRef) || 0;
    const token = records.startTokenAt;
    // A wrapper that took its token within the grace period records its pid right after.
    if (!graceOver(launched, now, options) || (token !== null && !graceOver(token, now, options))) {
      return { alive: true, by: 'starting', detail: 'starting' };
    }
    return {
      alive: false,
      reason: `the agent never started (${state.sessionRef} stayed 'starting')`,
      mayStart: state.status === 'starting' && state.pid === null && records.startTokenAt === null,
    };
  }
  if (state.host !== probe.hostname()) {
    return isHeartbeatStale(state.lastHeartbeat, now, options.staleAfterMs)
      ? dead(`no heartbeat from host ${state.host} since ${state.lastHeartbeat ?? 'never'}`)
      : {
          alive: true,
          by: 'heartbeat',
          detail: `on host ${state.host}, last heartbeat ${state.lastHeartbeat ?? 'never'}`,
        };
  }
  const wrapper: ProcessIdentity = {
    pid: state.pid,
    startTicks: state.startTicks,
    bootId: state.bootId,
    host: state.host,
  };
  const wrapperLiveness = checkLiveness(wrapper, probe);
  if (isAlive(wrapperLiveness)) return { alive: true, by: 'wrapper', detail: 'alive' };
  const wrapperGone = `agent wrapper ${describeLiveness(wrapper, wrapperLiveness, probe)}`;
  if (state.agentPid !== null && state.agentStartTicks !== null) {
    const agent = { ...wrapper, pid: state.agentPid, startTicks: state.agentStartTicks };
    if (isAlive(checkLiveness(agent, probe))) {
      return {
        alive: true,
        by: 'agent',
        detail: `its agent (pid ${state.agentPid}) is alive; ${wrapperGone}`,
      };
    }
  }
  return dead(wrapperGone);
}

/**
 * Judges a claim whose session has no usable record, made at `claimedAt` (ms since the epoch):
 * the record is written before the launch, so no wrapper was started for it.
 */
export function judgeUnrecorded(
  claimedAt: number,
  now: Date,
  options: JudgeOptions,
): SessionVerdict {
  if (!graceOver(claimedAt, now, options)) {
    return { alive: true, by: 'starting', detail: 'no session record yet' };
  }
  return dead(
    `no session record ${Math.round(options.claimGraceMs / 1000)} s after the claim (the daemon stopped between claim and spawn)`,
  );
}

function graceOver(since: number, now: Date, options: JudgeOptions): boolean {
  return now.getTime() - since > options.claimGraceMs;
}

function dead(reason: string): SessionVerdict {
  return { alive: false, reason, mayStart: false };
}
