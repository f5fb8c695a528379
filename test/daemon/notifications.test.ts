/**
 * Notifications with the real daemon, tmux and the test agent: the `--on-event` command gets each
 * event once with its placeholders, a hostile request file name reaches it as one literal
 * argument (nothing runs), and a command that hangs does not stall dispatch.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadNodePty } from '../../src/runners/pty-runner.js';
import { release, useDaemonHarness, waitForReady, waitForTag } from '../helpers/daemon-harness.js';
import { loggedCalls, notifyLogTemplate } from '../helpers/notify-log.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

function onEvent(out: string): string[] {
  return ['--on-event', notifyLogTemplate(out, '{event} {file} {noun} {session} {reason} {until}')];
}

describe('notifications (--on-event)', () => {
  it('runs the command once per event with its placeholders; a hostile name injects nothing', async () => {
    const out = join(h.root, 'notified.jsonl');
    // What the hostile name would remove if a shell ran it.
    await mkdir(join(h.root, 'x'));
    await writeFile(join(h.root, 'x', 'keep'), 'kept');
    const d = h.start(onEvent(out));
    await waitForReady(d);
    const hostile = await h.request(
      `$(touch pwned) ;rm -rf x 'q".md`,
      '# Hostile\n**Tags**: #delegated-fix\n',
    );
    await waitForTag(hostile, ['#done-fix'], 60_000);
    await waitFor(() => loggedCalls(out).length >= 1, {
      message: () => `a notification; ${d.output()}`,
    });
    await d.stop();
    const done = loggedCalls(out);
    expect(done).toHaveLength(1);
    const [event, file, noun, session, reason, until] = done[0] as string[];
    expect([event, file, noun, reason, until]).toEqual(['done', hostile, 'fix', '', '']);
    expect(session).toMatch(/^sessions\/\d{4}_\d{2}_\d{2}_\d{6}_FIX_/);
    expect(existsSync(join(h.root, 'pwned'))).toBe(false);
    expect(existsSync(join(h.sessions, 'pwned'))).toBe(false);
    expect(readFileSync(join(h.root, 'x', 'keep'), 'utf8')).toBe('kept');
  });

  it('notifies of a requeue once, with its reason', async () => {
    const out = join(h.root, 'notified.jsonl');
    const d = h.start(onEvent(out), { TEST_AGENT_MODE: 'exit' });
    await waitForReady(d);
    const file = await h.request('DIES.md', '# Dies\n**Tags**: #delegated-fix\n');
    await waitForTag(file, ['#needs-fix'], 60_000);
    await waitFor(() => loggedCalls(out).length >= 1, {
      message: () => `a notification; ${d.output()}`,
    });
    await d.stop();
    const requeued = loggedCalls(out);
    expect(requeued).toHaveLength(1);
    expect(requeued[0]?.slice(0, 3)).toEqual(['requeued', file, 'fix']);
    expect(requeued[0]?.[4]).toMatch(/exit/);
  });

  it('--notify-via tmux shows the event to a client attached to the agents’ tmux server', async () => {
    const pty = await loadNodePty();
    const d = h.start(['--notify-via', 'tmux'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('#(touch pwned).md', '# T\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    const client = pty.spawn('tmux', ['-L', h.socket, 'attach', '-t', 'dispatch'], {
      name: 'xterm',
      cols: 200,
      rows: 20,
      cwd: h.root,
      env: { ...process.env, TMUX: '', TMUX_PANE: '', TERM: 'xterm' } as Record<string, string>,
    });
    h.killAtEnd(client.pid);
    let screen = '';
    client.onData((data: string) => (screen += data));
    await waitFor(
      () =>
        execFileSync('tmux', ['-L', h.socket, 'list-clients'], { encoding: 'utf8' }).trim() !== '',
      { message: 'the tmux client to attach' },
    );
    await release(agent!.session);
    await waitForTag(file, ['#done-fix'], 60_000);
    // Shown as written: the name neither ran nor expanded.
    await waitFor(() => screen.includes('engine: done sessions/#(touch pwned).md #fix'), {
      timeoutMs: 30_000,
      message: () => `the message on the client; ${JSON.stringify(screen.slice(-400))}`,
    });
    expect(existsSync(join(h.root, 'pwned'))).toBe(false);
  });

  it('a command that hangs does not stall dispatch, and is killed and logged at its time limit', async () => {
    const out = join(h.root, 'notified.jsonl');
    const d = h.start(onEvent(out), { TEST_NOTIFY_HANG: '1' });
    await waitForReady(d);
    const first = await h.request('ONE.md', '# One\n**Tags**: #delegated-fix\n');
    await waitForTag(first, ['#done-fix'], 60_000);
    await waitFor(() => loggedCalls(out).length === 1, {
      message: () => `the hanging command; ${d.output()}`,
    });
    // The command hangs now; the next items are claimed and finished all the same.
    const next = await Promise.all(
      ['TWO.md', 'THREE.md'].map((name) =>
        h.request(name, `# ${name}\n**Tags**: #delegated-fix\n`),
      ),
    );
    for (const file of next) await waitForTag(file, ['#done-fix'], 60_000);
    await waitFor(
      () =>
        /notification: the notification command .* ran past 10000 ms and was killed/.test(
          d.output(),
        ),
      {
        timeoutMs: 60_000,
        message: () => `the timeout in the log; ${d.output()}`,
      },
    );
    await waitFor(() => loggedCalls(out).length === 3, {
      timeoutMs: 60_000,
      message: 'three notifications',
    });
    expect(loggedCalls(out).map((c) => c[0])).toEqual(['done', 'done', 'done']);
    // A stop waits for the notifications under way, each within its limit, and leaves none running.
    expect(await d.stop()).toBe(0);
    expect(d.output().match(/ran past 10000 ms and was killed/g)).toHaveLength(3);
  });
});
