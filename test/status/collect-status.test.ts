/**
 * `engine status` judges claims as the daemon does (judgeSession): a session still `starting`
 * counts as running only within the grace period, and one on another host only while its
 * heartbeat is fresh.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DispatchTable } from '../../src/dispatch/dispatch-table.js';
import { collectStatus } from '../../src/status/collect-status.js';
import { createSessionDir } from '../../src/sessions/session-dir.js';
import { statePath } from '../../src/sessions/session-state.js';
import { craftedState } from '../helpers/crafted-state.js';
import { runCli } from '../helpers/run-cli.js';
import { BOOT, fakeProbe } from '../process/fake-probe.js';

let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

const NOW = new Date('2026-11-22T09:00:00.000Z');
const OPTIONS = { claimGraceMs: 60_000, staleAfterMs: 45 * 60_000 };

/** A claimed request whose session record is crafted with `over`. */
async function claim(name: string, over: Record<string, unknown>): Promise<string> {
  const sessions = join(root as string, 'sessions');
  await mkdir(sessions, { recursive: true });
  const file = join(sessions, `${name}.md`);
  const ref = `sessions/2026_11_22_080000_FIX_${name}_0001`;
  await writeFile(file, `# ${name}\n**Tags**: #claimed-fix\n**Session**: ${ref}\n`);
  const dir = await createSessionDir(root as string, ref);
  await writeFile(statePath(dir), JSON.stringify(craftedState(root as string, file, ref, over)));
  return file;
}

const FIX_TABLE: DispatchTable = new Map([
  ['fix', { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true }],
]);

const at = (minutesAgo: number) => new Date(NOW.getTime() - minutesAgo * 60_000).toISOString();

describe('collectStatus', () => {
  it('counts a starting session as running within the grace period only', async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-status-'));
    const fresh = await claim('fresh', { status: 'starting', startedAt: at(0.5) });
    const stuck = await claim('stuck', { status: 'starting', startedAt: at(30) });
    const report = await collectStatus(root, [join(root, 'sessions')], new Map(), {
      now: NOW,
      options: OPTIONS,
      probe: fakeProbe(),
    });
    expect(report.running.map((c) => c.file)).toEqual([fresh]);
    expect(report.stale).toEqual([
      expect.objectContaining({
        file: stuck,
        alive: false,
        liveness: expect.stringMatching(/never started/),
      }),
    ]);
  });

  it('counts a session on another host as running while its heartbeat is fresh only', async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-status-'));
    const remote = { host: 'elsewhere', pid: 4100, startTicks: '100', bootId: BOOT };
    const beating = await claim('beating', { ...remote, lastHeartbeat: at(1) });
    const silent = await claim('silent', { ...remote, lastHeartbeat: at(60) });
    const report = await collectStatus(root, [join(root, 'sessions')], new Map(), {
      now: NOW,
      options: OPTIONS,
      probe: fakeProbe(),
    });
    expect(report.running.map((c) => c.file)).toEqual([beating]);
    expect(report.stale).toEqual([
      expect.objectContaining({
        file: silent,
        liveness: expect.stringMatching(/no heartbeat from host elsewhere/),
      }),
    ]);
  });

  it('names a file with two lifecycle states of one noun as not dispatched, and why', async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-status-'));
    const r = root;
    expect((await runCli(['init'], { cwd: r })).code).toBe(0);
    const twice = join(r, 'sessions', 'twice.md');
    await writeFile(twice, '# Twice\n**Tags**: #done-fix #delegated-fix\n');
    await writeFile(join(r, 'sessions', 'once.md'), '# Once\n**Tags**: #delegated-fix\n');
    const report = await collectStatus(r, [join(r, 'sessions')], FIX_TABLE, {
      now: NOW,
      options: OPTIONS,
      probe: fakeProbe(),
    });
    expect(report.waiting.map((w) => w.file)).toEqual([join(r, 'sessions', 'once.md')]);
    expect(report.needsYou).toEqual([
      {
        kind: 'not-dispatched',
        file: twice,
        tags: ['#done-fix', '#delegated-fix'],
        line: null,
        reason: expect.stringMatching(/^it holds #done-fix #delegated-fix on its Tags line/),
      },
    ]);
    const shown = await runCli(['status', '--root', r], { cwd: r });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      `Needs you (1):\n  sessions/twice.md  #done-fix #delegated-fix  never dispatched\n    it holds #done-fix #delegated-fix on its Tags line or front matter, two\n`,
    );
  });
});
