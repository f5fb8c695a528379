/**
 * `engine cancel FILE` on real processes: a daemon with its stand-in agent on its own tmux server,
 * the built CLI. A cancel lands on `#needs-X` with a `cancelled` Recovery entry even while a
 * daemon with --retries runs (which would send an agent's exit back to `#delegated-X`), the agent
 * is ended by its recorded identity, and a human's claim is never touched.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  events,
  isAlive,
  read,
  recoveries,
  stateOf,
  tagsOf,
  useDaemonHarness,
  waitForReady,
  waitForState,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

/** The session directory named by the request's Session line. */
function sessionDirOf(text: string): string {
  return join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(text)![1]!);
}

/** Starts a daemon and waits until its agent for a new `#delegated-fix` request runs. */
async function runningClaim(extra: string[], env: Record<string, string> = {}) {
  const d = h.start(extra, env);
  await waitForReady(d);
  const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const dir = sessionDirOf(await waitForTag(file, ['#claimed-fix']));
  const running = await waitForState(
    dir,
    (s) => s.agentPid !== null,
    () => d.output(),
  );
  const agentPid = running.agentPid as number;
  h.killAtEnd(agentPid);
  return { d, file, dir, agentPid };
}

it('cancels a running item while a daemon with --retries 2 runs: #needs-X with a cancelled entry, the agent gone, the session abandoned, no retry', async () => {
  const { d, file, dir, agentPid } = await runningClaim(
    ['--retries', '2', '--retry-backoff-ms', '100'],
    { TEST_AGENT_MODE: 'hold' },
  );

  const result = await runCli(['cancel', file, '--json']);
  expect(result.code, result.stderr + d.output()).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({
    noun: 'fix',
    to: '#needs-fix',
    agentPid,
    ended: 'SIGTERM',
  });
  expect(isAlive(agentPid)).toBe(false);

  const text = await read(file);
  expect(tagsOf(text)).toEqual(['#needs-fix']);
  expect(text).not.toContain('**Session**:');
  expect(recoveries(text)).toBe(1);
  expect(text).toContain('**Reason**: cancelled\n');
  expect(text).toContain('**Failure**: cancelled (not an attempt)');
  expect(text).toContain('**Attempt**: 1');
  await waitForState(dir, (s) => s.status === 'abandoned' || s.status === 'exited');
  const cancelled = events(h.root).filter((e) => e.event === 'cancelled');
  expect(cancelled).toHaveLength(1);
  expect(cancelled[0]).toMatchObject({ noun: 'fix', reason: 'cancelled', to: '#needs-fix' });

  // The daemon saw the agent end: it did not send the item back to #delegated-fix, nor start it again.
  expect(await d.stop()).toBe(0);
  const after = await read(file);
  expect(tagsOf(after)).toEqual(['#needs-fix']);
  expect(recoveries(after)).toBe(1);
  expect(events(h.root).filter((e) => e.event === 'requeued')).toEqual([]);
  expect(h.agents()).toHaveLength(1);
});

it('cancels an item whose daemon stopped (its agent runs on): the session record ends abandoned, with the reason', async () => {
  const { d, file, dir, agentPid } = await runningClaim([], { TEST_AGENT_MODE: 'hold' });
  expect(await d.stop()).toBe(0);
  expect(isAlive(agentPid)).toBe(true);

  const result = await runCli(['cancel', file]);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toMatch(
    /^Cancelled .*REQ\.md: its agent \(pid \d+\) ended on SIGTERM; it is #needs-fix now \(sessions\/.+\)\n$/,
  );
  const state = await stateOf(dir);
  expect(state.status).toBe('abandoned');
  expect(state.reason).toBe('cancelled (engine cancel)');
  // The wrapper's exit is copied in: 128 + SIGTERM.
  expect(state.exitCode).toBe(143);
});

it('sends SIGKILL to an agent that ignores SIGTERM, once --grace has passed', async () => {
  const fake = join(h.root, 'fake-claude');
  // Ready (TERM ignored) before it says so: the test cancels only then.
  await writeFile(
    fake,
    `#!/bin/sh\ntrap '' TERM\ntouch "$ENGINE_SESSION_DIR/ready"\nexec sleep 600\n`,
  );
  await chmod(fake, 0o755);
  const { file, dir, agentPid } = await runningClaim(['--agent', 'claude', '--claude-bin', fake]);
  await waitFor(() => existsSync(join(dir, 'ready')), { message: 'the stand-in to be ready' });

  const started = Date.now();
  const result = await runCli(['cancel', file, '--grace', '0.5', '--json']);
  expect(result.code, result.stderr).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ ended: 'SIGKILL', agentPid });
  expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  expect(result.stderr).toContain('did not exit 0.5 s after SIGTERM; SIGKILL');
  expect(isAlive(agentPid)).toBe(false);
  expect(tagsOf(await read(file))).toEqual(['#needs-fix']);
});

it("refuses a human's claim (no Session line), and changes nothing", async () => {
  const text = '# R\n**Tags**: #claimed-fix\n\nMine.\n';
  const file = await h.request('REQ.md', text);
  const result = await runCli(['cancel', file, '--root', h.root]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(
    "is claimed (#claimed-fix), but not by a live engine session; a human's claim is never touched (it has no **Session**: line)",
  );
  expect(await read(file)).toBe(text);
});

it('refuses a claim whose Session line names no live engine session', async () => {
  await mkdir(join(h.sessions, '2026_01_01_000000_FIX_r_abcd'));
  const text =
    '# R\n**Tags**: #claimed-fix\n**Session**: sessions/2026_01_01_000000_FIX_r_abcd\n\nMine.\n';
  const file = await h.request('REQ.md', text);
  const result = await runCli(['cancel', file]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('has no usable session record');
  expect(await read(file)).toBe(text);
});

it('refuses an item that is not claimed, and a missing file', async () => {
  const text = '# R\n**Tags**: #delegated-fix\n';
  const file = await h.request('REQ.md', text);
  const result = await runCli(['cancel', file]);
  expect(result.code).toBe(1);
  expect(result.stderr).toBe(
    `ERROR: ${file} carries #delegated-fix on its Tags line or front matter, not #claimed-*: it is not claimed; nothing to cancel\n`,
  );
  expect(await read(file)).toBe(text);
  const missing = await runCli(['cancel', join(h.sessions, 'nope.md'), '--root', h.root]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/^ERROR: .*nope\.md/);
});
