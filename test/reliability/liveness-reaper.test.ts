/**
 * Liveness through the daemon's reaper: `engine run --monitor-tags --once` on a root with crafted
 * claims and session records (in `.state.json`, or in the agent wrapper's own record files), one
 * per kind of process identity, and a running daemon that must
 * requeue a dead claim within one reap interval. Each claim must end requeued (dead) or left
 * alone (alive), as docs/DAEMON.md's table says.
 */
import { execFileSync } from 'node:child_process';
import { chownSync } from 'node:fs';
import { readdir, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readProcessIdentity, type ProcessIdentity } from '../../src/process/process-identity.js';
import { craftClaim, craftedState, sessionRef } from '../helpers/crafted-state.js';
import {
  read,
  tagsOf,
  useDaemonHarness,
  waitForReady,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { OtherUserDir } from '../helpers/other-user.js';
import { waitFor } from '../helpers/wait-for.js';
import { canRunAsNobody, NOBODY, procUid, startZombie } from '../process/spawned.js';
import { FAST, recordFigure } from './support.js';

const s = useDaemonHarness(FAST);
const children = s.children;
let other: OtherUserDir | undefined;
afterEach(async () => {
  await other?.remove();
  other = undefined;
});

async function sleeper(): Promise<ProcessIdentity> {
  const child = children.spawn('sleep', ['60']);
  return waitFor(() => readProcessIdentity(child.pid!));
}

/** A pid no process has: a child that was started, killed and reaped. */
async function deadPid(): Promise<ProcessIdentity> {
  const child = children.spawn('true', []);
  const identity = readProcessIdentity(child.pid!) ?? {
    pid: child.pid!,
    startTicks: '1',
    bootId: readProcessIdentity(process.pid)!.bootId,
    host: hostname(),
  };
  await new Promise((resolve) =>
    child.exitCode !== null ? resolve(null) : child.once('exit', resolve),
  );
  return identity;
}

const wrapper = (id: ProcessIdentity) => ({
  pid: id.pid,
  startTicks: id.startTicks,
  bootId: id.bootId,
  host: id.host,
});

interface WrapperFiles {
  wrapper: ProcessIdentity;
  agent?: ProcessIdentity;
  exit?: number;
  heartbeatAgeMs?: number;
}

/** What the agent wrapper writes beside `.state.json` (docs/DAEMON.md, "The agent wrapper"). */
async function writeWrapperFiles(dir: string, files: WrapperFiles): Promise<void> {
  const { wrapper, agent, exit, heartbeatAgeMs } = files;
  await writeFile(join(dir, '.started'), '');
  await writeFile(
    join(dir, '.wrapper'),
    `pid=${wrapper.pid}\nstart=${wrapper.startTicks}\nboot=${wrapper.bootId}\nhost=${wrapper.host}\npane=\n`,
  );
  if (agent) await writeFile(join(dir, '.agent'), `pid=${agent.pid}\nstart=${agent.startTicks}\n`);
  if (exit !== undefined) await writeFile(join(dir, '.exit'), `code=${exit}\n`);
  if (heartbeatAgeMs !== undefined) {
    await writeFile(join(dir, '.heartbeat'), '');
    const at = new Date(Date.now() - heartbeatAgeMs);
    await utimes(join(dir, '.heartbeat'), at, at);
  }
}

interface Expectation {
  name: string;
  verdict: 'requeued' | 'left alone';
  reason?: RegExp;
}

async function verdicts(files: Map<string, Expectation>): Promise<string[]> {
  const wrong: string[] = [];
  for (const [file, want] of files) {
    const text = await read(file);
    const tags = tagsOf(text);
    const got = tags.includes('#needs-fix')
      ? 'requeued'
      : tags.includes('#claimed-fix')
        ? 'left alone'
        : `?? ${tags.join(' ')}`;
    if (got !== want.verdict) wrong.push(`${want.name}: ${got}, expected ${want.verdict}`);
    else if (want.reason && !want.reason.test(text))
      wrong.push(`${want.name}: reason does not match ${want.reason}:\n${text}`);
    if (!text.includes('Human text.')) wrong.push(`${want.name}: lost the human text`);
  }
  return wrong;
}

/** One process identity of each kind the reaper judges, started (or ended) in this order. */
async function identities() {
  const live = await sleeper();
  const zombie = await startZombie(children);
  const zombieId = readProcessIdentity(zombie.pid)!;
  const dead = await deadPid();
  const agentAlive = await sleeper();
  return { live, zombieId, dead, agentAlive };
}

/** Runs `--once`, checks the verdict on each crafted claim and records the figure `name`. */
async function judgedOnce(files: Map<string, Expectation>, name: string): Promise<void> {
  const { code, output } = await s.once();
  expect(code, output).toBe(0);
  const wrong = await verdicts(files);
  recordFigure(name, { cases: files.size, misclassified: wrong.length });
  expect(wrong, output).toEqual([]);
}

describe('the reaper classifies each crafted claim (engine run --once)', () => {
  it('reused pid, zombie, dead, exited, previous boot, other host fresh/stale, alive', async () => {
    const { live, zombieId, dead, agentAlive } = await identities();
    const long = 10 * 60_000;
    const cases: [string, Record<string, unknown> | null, Expectation][] = [
      [
        'reused',
        { ...wrapper(live), startTicks: String(Number(live.startTicks) - 500) },
        {
          name: 'pid reused by an unrelated process',
          verdict: 'requeued',
          reason: /another process/,
        },
      ],
      ['zombie', wrapper(zombieId), { name: 'zombie', verdict: 'requeued', reason: /zombie/ }],
      ['dead', wrapper(dead), { name: 'dead pid', verdict: 'requeued', reason: /is gone/ }],
      [
        'exited',
        { ...wrapper(dead), status: 'exited', exitCode: 7 },
        { name: 'exited', verdict: 'requeued', reason: /exited with code 7/ },
      ],
      [
        'boot',
        { ...wrapper(live), bootId: '00000000-0000-0000-0000-000000000000' },
        { name: "previous boot's boot id", verdict: 'requeued', reason: /boot/ },
      ],
      [
        'hostfresh',
        { ...wrapper(live), host: 'another-host.example', lastHeartbeat: new Date().toISOString() },
        { name: 'other host, fresh heartbeat', verdict: 'left alone' },
      ],
      [
        'hoststale',
        {
          ...wrapper(live),
          host: 'another-host.example',
          lastHeartbeat: new Date(Date.now() - 2 * 3600_000).toISOString(),
        },
        {
          name: 'other host, stale heartbeat',
          verdict: 'requeued',
          reason: /no heartbeat from host/,
        },
      ],
      ['alive', wrapper(live), { name: 'live wrapper', verdict: 'left alone' }],
      [
        'agentalive',
        { ...wrapper(dead), agentPid: agentAlive.pid, agentStartTicks: agentAlive.startTicks },
        { name: 'wrapper dead, agent alive', verdict: 'left alone' },
      ],
      [
        'starting',
        { status: 'starting', startedAt: new Date(Date.now() - long).toISOString() },
        { name: "'starting' past the grace period", verdict: 'requeued', reason: /never started/ },
      ],
      [
        'norecord',
        null,
        {
          name: 'no .state.json past the grace period',
          verdict: 'requeued',
          reason: /no session record/,
        },
      ],
    ];
    const files = new Map<string, Expectation>();
    for (const [tag, over, want] of cases) {
      const ref = sessionRef(long, tag);
      const file = s.file(`${tag}.md`);
      const state = over === null ? null : craftedState(s.root, file, ref, over);
      files.set(await craftClaim(s.root, `${tag}.md`, ref, state), want);
    }
    await judgedOnce(files, 'liveness-reaper');
    // Nothing the reaper judged was killed: the unrelated process that reused the pid lives.
    expect(readProcessIdentity(live.pid)).not.toBeNull();
  });

  it('the same verdicts when the identities come from the wrapper’s record files', async () => {
    const { live, zombieId, dead, agentAlive } = await identities();
    const long = 10 * 60_000;
    const other = { ...live, host: 'another-host.example' };
    const cases: [string, WrapperFiles, Expectation][] = [
      [
        'reused',
        { wrapper: { ...live, startTicks: String(Number(live.startTicks) - 500) } },
        { name: 'files: pid reused', verdict: 'requeued', reason: /another process/ },
      ],
      [
        'zombie',
        { wrapper: zombieId },
        { name: 'files: zombie', verdict: 'requeued', reason: /zombie/ },
      ],
      ['dead', { wrapper: dead }, { name: 'files: dead pid', verdict: 'requeued', reason: /gone/ }],
      [
        'exited',
        { wrapper: live, agent: agentAlive, exit: 7 },
        { name: 'files: .exit', verdict: 'requeued', reason: /exited with code 7/ },
      ],
      [
        'boot',
        { wrapper: { ...live, bootId: '00000000-0000-0000-0000-000000000000' } },
        { name: 'files: previous boot', verdict: 'requeued', reason: /boot/ },
      ],
      [
        'hostfresh',
        { wrapper: other, heartbeatAgeMs: 0 },
        { name: 'files: other host, fresh heartbeat', verdict: 'left alone' },
      ],
      [
        'hoststale',
        { wrapper: other, heartbeatAgeMs: 2 * 3600_000 },
        { name: 'files: other host, stale', verdict: 'requeued', reason: /no heartbeat from host/ },
      ],
      ['alive', { wrapper: live }, { name: 'files: live wrapper', verdict: 'left alone' }],
      [
        'agentalive',
        { wrapper: dead, agent: agentAlive },
        { name: 'files: wrapper dead, agent alive', verdict: 'left alone' },
      ],
    ];
    const files = new Map<string, Expectation>();
    for (const [tag, records, want] of cases) {
      const ref = sessionRef(long, `f${tag}`);
      const file = s.file(`f${tag}.md`);
      const state = craftedState(s.root, file, ref, { status: 'starting' });
      files.set(await craftClaim(s.root, `f${tag}.md`, ref, state), want);
      await writeWrapperFiles(join(s.root, ref), records);
    }
    await judgedOnce(files, 'liveness-reaper-files');
    expect(readProcessIdentity(live.pid)).not.toBeNull();
  });

  it.skipIf(!canRunAsNobody())(
    'a live process of another user (EPERM to kill(pid,0)) is alive; a dead one is requeued',
    async () => {
      const rootOwned = await sleeper(); // the daemon runs as nobody: root's process is EPERM
      const dead = await deadPid();
      const long = 10 * 60_000;
      const files = new Map<string, Expectation>();
      for (const [tag, id, want] of [
        ['eperm', rootOwned, { name: "another user's live process", verdict: 'left alone' }],
        ['gone', dead, { name: 'dead pid (as nobody)', verdict: 'requeued', reason: /is gone/ }],
      ] as const) {
        const ref = sessionRef(long, tag);
        const file = s.file(`${tag}.md`);
        files.set(
          await craftClaim(s.root, `${tag}.md`, ref, craftedState(s.root, file, ref, wrapper(id))),
          want as Expectation,
        );
      }
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
      chownSync(s.root, NOBODY, NOBODY);
      // Run from a copy nobody can read: the checkout may be in a directory it cannot enter.
      other = await OtherUserDir.create();
      const run = await other.runEngineAsNobody((agentCmd) => [
        '--once',
        '--root',
        s.root,
        '--tmux-socket',
        s.socket,
        '--agent-cmd',
        agentCmd,
        '--claim-grace-ms',
        '1000',
      ]);
      s.children.track(run.child);
      const { child } = run;
      await waitFor(() => child.pid !== undefined && procUid(child.pid) === NOBODY, {
        message: 'the daemon to run as nobody',
      }).catch(() => undefined);
      const code = await run.exited;
      const output = run.output();
      expect(code, output).toBe(0);
      const wrong = await verdicts(files);
      recordFigure('liveness-eperm', { cases: files.size, misclassified: wrong.length });
      expect(wrong, output).toEqual([]);
    },
  );
});

describe('a running daemon requeues a dead claim within one reap interval', () => {
  it('from the moment it reads the claim', async () => {
    const reapMs = 300;
    const d = s.start(['--reap-interval-ms', String(reapMs), '--debounce-ms', '100']);
    await waitForReady(d);
    const dead = await deadPid();
    const samples: number[] = [];
    for (let i = 0; i < 3; i++) {
      const ref = sessionRef(60_000, `late${i}`);
      const file = s.file(`late${i}.md`);
      await craftClaim(s.root, `late${i}.md`, ref, craftedState(s.root, file, ref, wrapper(dead)));
      // The daemon reads the file once it settles (debounce), then the next reap requeues it.
      const readAt = Date.now();
      await waitForTag(file, ['#needs-fix'], 10_000);
      samples.push(Date.now() - readAt);
    }
    const worst = Math.max(...samples);
    recordFigure('reap-latency', {
      reapIntervalMs: reapMs,
      debounceMs: 100,
      worstMs: worst,
      samples,
    });
    // Debounce + one reap interval + the time to read and write, with room for a loaded machine.
    expect(worst).toBeLessThan(100 + reapMs + 1500);
    const sessions = await readdir(s.sessions);
    expect(sessions.filter((n) => n.startsWith('20')).length).toBe(3);
  });
});
