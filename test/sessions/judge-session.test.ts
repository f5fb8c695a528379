/**
 * judgeSession, the one judge of a session, with an injected probe and clock: every finding the
 * daemon, `engine status` and `engine attach` act on.
 */
import { describe, expect, it } from 'vitest';
import {
  judgeSession,
  judgeUnrecorded,
  type JudgeOptions,
} from '../../src/sessions/judge-session.js';
import type { SessionState } from '../../src/sessions/session-state.js';
import { craftedState } from '../helpers/crafted-state.js';
import { BOOT, fakeProbe, HOST, statLine } from '../process/fake-probe.js';

const NOW = new Date('2026-11-22T08:00:00.000Z');
const OPTIONS: JudgeOptions = { claimGraceMs: 60_000, staleAfterMs: 45 * 60_000 };
const WRAPPER = 4100;
const AGENT = 4200;
const ago = (ms: number) => NOW.getTime() - ms;
const iso = (ms: number) => new Date(ms).toISOString();

function session(over: Partial<SessionState> = {}): SessionState {
  return craftedState('/r', '/r/sessions/REQ.md', 'sessions/2026_11_22_075000_FIX_req_0001', {
    pid: WRAPPER,
    startTicks: '100',
    bootId: BOOT,
    host: HOST,
    agentPid: AGENT,
    agentStartTicks: '200',
    startedAt: iso(ago(10 * 60_000)),
    lastHeartbeat: iso(ago(1000)),
    ...over,
  }) as unknown as SessionState;
}

const running = (pid: number, ticks: string) => statLine(pid, 'sh', 'S', ticks);
const noToken = { startTokenAt: null };

describe('judgeSession', () => {
  it('a live wrapper: alive', () => {
    const probe = fakeProbe({ stats: { [WRAPPER]: running(WRAPPER, '100') } });
    expect(judgeSession(session(), noToken, NOW, OPTIONS, probe)).toEqual({
      alive: true,
      by: 'wrapper',
      detail: 'alive',
    });
  });

  it('a wrapper killed on its own while its agent lives: alive, by the agent', () => {
    const probe = fakeProbe({ stats: { [AGENT]: running(AGENT, '200') } });
    expect(judgeSession(session(), noToken, NOW, OPTIONS, probe)).toEqual({
      alive: true,
      by: 'agent',
      detail: `its agent (pid ${AGENT}) is alive; agent wrapper pid ${WRAPPER} is gone`,
    });
  });

  it('wrapper and agent gone, a zombie, or pids now used by other processes: dead', () => {
    const cases: Array<[Record<number, string>, string]> = [
      [{}, `agent wrapper pid ${WRAPPER} is gone`],
      [
        { [WRAPPER]: statLine(WRAPPER, 'sh', 'Z', '100') },
        `agent wrapper pid ${WRAPPER} is a zombie (it exited and was not reaped yet)`,
      ],
      [
        { [WRAPPER]: running(WRAPPER, '999'), [AGENT]: running(AGENT, '998') },
        `agent wrapper pid ${WRAPPER} now belongs to another process (start time differs)`,
      ],
    ];
    for (const [stats, reason] of cases) {
      const verdict = judgeSession(session(), noToken, NOW, OPTIONS, fakeProbe({ stats }));
      expect(verdict, reason).toEqual({ alive: false, reason, mayStart: false });
    }
  });

  it('recorded on a previous boot: dead, whatever runs under those pids now', () => {
    const probe = fakeProbe({
      bootId: 'another-boot',
      stats: { [WRAPPER]: running(WRAPPER, '100'), [AGENT]: running(AGENT, '200') },
    });
    const verdict = judgeSession(session(), noToken, NOW, OPTIONS, probe);
    expect(verdict).toMatchObject({ alive: false, reason: expect.stringMatching(/was recorded on boot/) });
  });

  it('on another host: alive while its heartbeat is fresh, dead once it is stale or missing', () => {
    const probe = fakeProbe({ host: 'elsewhere' });
    expect(judgeSession(session(), noToken, NOW, OPTIONS, probe)).toMatchObject({
      alive: true,
      by: 'heartbeat',
    });
    const stale = session({ lastHeartbeat: iso(ago(46 * 60_000)) });
    expect(judgeSession(stale, noToken, NOW, OPTIONS, probe)).toEqual({
      alive: false,
      reason: `no heartbeat from host ${HOST} since ${stale.lastHeartbeat}`,
      mayStart: false,
    });
    const never = session({ lastHeartbeat: null });
    expect(judgeSession(never, noToken, NOW, OPTIONS, probe)).toMatchObject({
      alive: false,
      reason: `no heartbeat from host ${HOST} since never`,
    });
    expect(probe.statCalls).toEqual([]);
  });

  it('exited or abandoned: dead, even with processes alive under its pids', () => {
    const probe = fakeProbe({
      stats: { [WRAPPER]: running(WRAPPER, '100'), [AGENT]: running(AGENT, '200') },
    });
    expect(
      judgeSession(session({ status: 'exited', exitCode: 3 }), noToken, NOW, OPTIONS, probe),
    ).toEqual({
      alive: false,
      reason: 'agent exited with code 3 without marking #done-fix',
      mayStart: false,
    });
    const abandoned = session({ status: 'abandoned', reason: 'spawn failed: no tmux' });
    expect(judgeSession(abandoned, noToken, NOW, OPTIONS, probe)).toEqual({
      alive: false,
      reason: 'spawn failed: no tmux',
      mayStart: false,
    });
  });

  describe('starting, before the wrapper recorded itself', () => {
    const starting = (launchedAgo: number) =>
      session({
        status: 'starting',
        pid: null,
        startTicks: null,
        bootId: null,
        agentPid: null,
        agentStartTicks: null,
        startedAt: iso(ago(launchedAgo)),
      });

    it('is alive within the grace period', () => {
      expect(judgeSession(starting(59_000), noToken, NOW, OPTIONS, fakeProbe())).toEqual({
        alive: true,
        by: 'starting',
        detail: 'starting',
      });
    });

    it('is dead past it; with the start token free, a wrapper may still start', () => {
      const state = starting(61_000);
      expect(judgeSession(state, noToken, NOW, OPTIONS, fakeProbe())).toEqual({
        alive: false,
        reason: `the agent never started (${state.sessionRef} stayed 'starting')`,
        mayStart: true,
      });
    });

    it('is alive while its wrapper took the token within the grace period, dead after', () => {
      const state = starting(5 * 60_000);
      const recent = { startTokenAt: ago(1000) };
      expect(judgeSession(state, recent, NOW, OPTIONS, fakeProbe())).toMatchObject({
        alive: true,
        by: 'starting',
      });
      const old = { startTokenAt: ago(61_000) };
      expect(judgeSession(state, old, NOW, OPTIONS, fakeProbe())).toMatchObject({
        alive: false,
        mayStart: false,
      });
    });

    it('counts from the claim time in the session name when startedAt is unreadable', () => {
      const state = { ...starting(0), startedAt: 'garbage' };
      // The name says 07:50:00, ten minutes before NOW.
      expect(judgeSession(state, noToken, NOW, OPTIONS, fakeProbe())).toMatchObject({
        alive: false,
      });
      const early = new Date('2026-11-22T07:50:30.000Z');
      expect(judgeSession(state, noToken, early, OPTIONS, fakeProbe())).toMatchObject({
        alive: true,
      });
    });
  });
});

describe('judgeUnrecorded', () => {
  it('a claim without a session record is starting within the grace period, dead after', () => {
    expect(judgeUnrecorded(ago(59_000), NOW, OPTIONS)).toEqual({
      alive: true,
      by: 'starting',
      detail: 'no session record yet',
    });
    expect(judgeUnrecorded(ago(61_000), NOW, OPTIONS)).toEqual({
      alive: false,
      reason:
        'no session record 60 s after the claim (the daemon stopped between claim and spawn)',
      mayStart: false,
    });
  });
});
