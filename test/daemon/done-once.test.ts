/**
 * Every item that reached done gets exactly one `done` event and one notification, whoever saw
 * it: a daemon started after the agent marked done while none ran, and a daemon killed at each
 * step of recording it (ENGINE_FAILPOINT), then started again. `engine status` lists the finished
 * item once.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  events,
  release,
  useDaemonHarness,
  waitForReady,
  waitForState,
  waitForTag,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { loggedCalls, notifyLogTemplate } from '../helpers/notify-log.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

function onEvent(out: string): string[] {
  return ['--on-event', notifyLogTemplate(out, '{event} {file} {session}')];
}

const doneEvents = (file: string) =>
  events(h.root).filter((e) => e.event === 'done' && e.file === file);

/** Starts a daemon again, waits until it recorded the item's done and exit, and stops it. */
async function restartUntilEnded(file: string, out: string): Promise<DaemonProcess> {
  const d = h.start(onEvent(out));
  await waitForReady(d);
  await waitFor(() => doneEvents(file).length >= 1 && loggedCalls(out).length >= 1, {
    message: () => `the done event and its notification; ${d.output()}`,
  });
  await waitFor(() => events(h.root).some((e) => e.event === 'exited' && e.file === file), {
    message: () => `the exit recorded; ${d.output()}`,
  });
  expect(await d.stop()).toBe(0);
  return d;
}

/** The item once, and only once: one done event, one notification, one line in engine status. */
async function expectDoneOnce(file: string, out: string, session: string): Promise<void> {
  expect(doneEvents(file)).toHaveLength(1);
  expect(doneEvents(file)[0]?.session).toBe(session);
  expect(loggedCalls(out)).toEqual([['done', file, session]]);
  const status = await runCli(['status', '--json', '--root', h.root]);
  expect(status.code, status.stderr).toBe(0);
  const { done } = JSON.parse(status.stdout) as { done: Array<{ event: string; file: string }> };
  expect(done.filter((e) => e.file === file).map((e) => e.event)).toEqual(['done']);
}

describe('the done of an item, exactly once', () => {
  it('is recorded and notified by a daemon started after the agent marked done while none ran', async () => {
    const out = join(h.root, 'notified.jsonl');
    const d = h.start(onEvent(out), { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    await waitForState(agent!.session, (s) => s.pid && s.agentPid);
    expect(await d.stop()).toBe(0);

    // No daemon runs: the agent marks the item done and exits.
    await release(agent!.session);
    await waitForTag(file, ['#done-fix']);
    await waitFor(() => existsSync(join(agent!.session, '.exit')), { message: 'the exit record' });
    expect(doneEvents(file)).toEqual([]);

    await restartUntilEnded(file, out);
    const session = `sessions/${agent!.session.split('/').pop()}`;
    await expectDoneOnce(file, out, session);
    // A further restart finds it recorded.
    const again = h.start(onEvent(out));
    await waitForReady(again);
    expect(await again.stop()).toBe(0);
    await expectDoneOnce(file, out, session);
  });

  it.each(['after-done-mark', 'after-done-event'])(
    'survives a daemon killed %s: the next daemon records what is missing, once',
    async (step) => {
      const out = join(h.root, 'notified.jsonl');
      const d = h.start(onEvent(out), { ENGINE_FAILPOINT: step });
      await waitForReady(d);
      const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
      await d.exited;
      expect(d.child.signalCode, d.output()).toBe('SIGKILL');
      await waitForTag(file, ['#done-fix']);
      const [agent] = h.agents();
      await waitFor(() => existsSync(join(agent!.session, '.exit')), {
        message: 'the exit record',
      });
      expect(doneEvents(file)).toHaveLength(step === 'after-done-mark' ? 0 : 1);

      await restartUntilEnded(file, out);
      await expectDoneOnce(file, out, `sessions/${agent!.session.split('/').pop()}`);
    },
  );
});
