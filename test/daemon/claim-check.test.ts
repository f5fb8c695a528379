/**
 * checkClaim in-process, where the moment between reading a request file and requeueing it can
 * be controlled: an agent that marks its item done and exits right after the daemon read the
 * file (a fast wrapper records the exit within milliseconds) must be judged done, never lost as
 * "not claimed" and never requeued. And a spawn that fails, run through the daemon with a runner
 * that cannot launch.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkClaim } from '../../src/daemon/claim-check.js';
import type { DaemonContext } from '../../src/daemon/daemon-context.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { EventInput } from '../../src/sessions/event-log.js';
import type { Runner } from '../../src/runners/runner.js';
import { createSessionDir, newSessionRef } from '../../src/sessions/session-dir.js';
import { statePath, type SessionState } from '../../src/sessions/session-state.js';
import { markSessionDone } from '../../src/sessions/session-markers.js';
import { summaryOf } from '../../src/tags/scan-pool.js';
import { scanTags } from '../../src/tags/scan-tags.js';
import { craftedState } from '../helpers/crafted-state.js';
import { inProcessContext } from '../helpers/in-process-context.js';

let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

function context(dir: string, scan: DaemonContext['scan']): DaemonContext {
  return inProcessContext(dir, { scan });
}

describe('checkClaim', () => {
  it('judges the file again when it changed under the requeue: done, not lost', async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-claim-check-'));
    const file = join(root, 'sessions', 'REQ.md');
    const ref = newSessionRef('fix', file, new Date());
    const dir = await createSessionDir(root, ref);
    const claimed = `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n\nHuman text.\n`;
    const done = claimed.replace('#claimed-fix', '#done-fix');
    await writeFile(file, claimed);
    const state = craftedState(root, file, ref, {
      status: 'exited',
      exitCode: 0,
      lastHeartbeat: null,
      endedAt: new Date().toISOString(),
    }) as unknown as SessionState;
    await writeFile(statePath(dir), JSON.stringify(state));
    let scans = 0;
    // The agent marks the item done while the daemon parses the text it read before.
    const ctx = context(root, async (text) => {
      if (scans++ === 0) await writeFile(file, done);
      return summaryOf(scanTags(text), text);
    });
    expect(await checkClaim(ctx, file, 'fix')).toEqual({ kind: 'done', session: ref });
    expect(await readFile(file, 'utf8')).toBe(done);
  });
});

describe('a request deleted while its claim is judged', () => {
  it.each([
    ['no session record', null],
    ['a malformed session record', '{ not json'],
  ])('is gone, not an exception, with %s', async (_, record) => {
    root = await mkdtemp(join(tmpdir(), 'engine-claim-check-'));
    const file = join(root, 'sessions', 'REQ.md');
    // A Session line without a claim time: the claim's age comes from the file's mtime.
    const ref = 'sessions/claimed-by-hand';
    const dir = await createSessionDir(root, ref);
    if (record !== null) await writeFile(statePath(dir), record);
    await writeFile(file, `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n`);
    // Deleted right after the daemon read it, while it parses the text.
    const ctx = context(root, async (text) => {
      await rm(file);
      return summaryOf(scanTags(text), text);
    });
    expect(await checkClaim(ctx, file, 'fix')).toEqual({ kind: 'gone' });
  });
});

describe('a Session line left by a finished attempt', () => {
  it("does not make a later claim (a human, or the next skill) the daemon's to requeue", async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-claim-check-'));
    const file = join(root, 'sessions', 'REQ.md');
    const ref = newSessionRef('fix', file, new Date());
    const dir = await createSessionDir(root, ref);
    // The item was done under `ref`, reopened, and claimed again by hand: the old line stays.
    const text = `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n\nHuman text.\n`;
    await writeFile(file, text);
    const state = craftedState(root, file, ref, {
      status: 'exited',
      exitCode: 0,
      endedAt: new Date().toISOString(),
    }) as unknown as SessionState;
    await writeFile(statePath(dir), JSON.stringify(state));
    await markSessionDone(dir);
    const verdict = await checkClaim(
      context(root, async (t) => summaryOf(scanTags(t), t)),
      file,
      'fix',
    );
    expect(verdict.kind).toBe('foreign');
    expect(await readFile(file, 'utf8')).toBe(text);
  });
});

describe('a failed spawn', () => {
  it('abandons the session through the state machine, records spawn-failed once, and sends the item back to #delegated-X with a backoff, not as an attempt', async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-spawn-failed-'));
    await mkdir(join(root, 'sessions'));
    const file = join(root, 'sessions', 'REQ.md');
    await writeFile(file, '# R\n**Tags**: #delegated-fix\n');
    const events: EventInput[] = [];
    const route = { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true };
    const ctx: DaemonContext = {
      ...context(root, async (text) => summaryOf(scanTags(text), text)),
      routes: {
        route: () => route,
        cap: () => undefined,
        watch: () => undefined,
        close: async () => undefined,
      },
      runner: {
        kind: 'tmux',
        launch: async () => Promise.reject(new Error('no tmux here')),
      } as unknown as Runner,
      recordEvent: async (event) => {
        events.push(event);
      },
    };
    const daemon = new Daemon(ctx);
    try {
      await daemon.runOnce();
    } finally {
      await daemon.stop();
    }

    const text = await readFile(file, 'utf8');
    expect(text).toContain('**Tags**: #delegated-fix\n');
    expect(text).toContain('**Reason**: spawn failed: no tmux here');
    expect(text).toContain('**Failure**: launch (not an attempt)');
    const notBefore = /\*\*Not Before\*\*: (\S+)/.exec(text)?.[1];
    expect(Date.parse(notBefore!)).toBeGreaterThan(Date.now());
    const ref = events[0]?.session as string;
    const state = JSON.parse(await readFile(statePath(join(root, ref)), 'utf8')) as SessionState;
    expect(state).toMatchObject({ status: 'abandoned', reason: 'spawn failed: no tmux here' });
    expect(events.map((e) => e.event)).toEqual(['claimed', 'spawn-failed', 'requeued']);
    expect(events[1]).toMatchObject({ file, noun: 'fix', session: ref });
  });
});

describe('a dead claim of another host', () => {
  it('goes to #needs-X for a human even with --retries: its agent may still live there', async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-claim-check-'));
    const file = join(root, 'sessions', 'REQ.md');
    const ref = newSessionRef('fix', file, new Date());
    const dir = await createSessionDir(root, ref);
    await writeFile(file, `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n\nHuman text.\n`);
    const state = craftedState(root, file, ref, {
      host: 'another-host.example',
      pid: 4242,
      startTicks: '1',
      bootId: 'another-boot',
      lastHeartbeat: new Date(Date.now() - 24 * 3_600_000).toISOString(),
    });
    await writeFile(statePath(dir), JSON.stringify(state));
    const ctx = inProcessContext(root, { options: { retries: 3 } });
    expect(await checkClaim(ctx, file, 'fix')).toMatchObject({ kind: 'requeued' });
    const text = await readFile(file, 'utf8');
    expect(text).toContain('#needs-fix');
    expect(text).not.toContain('#delegated-fix');
  });
});
