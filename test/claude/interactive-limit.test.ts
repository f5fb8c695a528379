/**
 * A usage limit hit by the default `claude` profile: interactive Claude Code in a tmux window
 * (the harness's own `tmux -L` server) against the Messages API stand-in, which answers its first
 * request HTTP 429 with a reset an hour ahead. The CLI (2.1.330) then fires its StopFailure hook
 * (`rate_limit`, so agent-state.json says `limited`) and waits at its prompt instead of exiting.
 * The daemon pauses the queue at once (no new claim starts, a second approved item stays
 * `#delegated-fix`), ends the limited agent, and its claim goes back to `#delegated-fix` with one
 * Recovery entry that is not an attempt. After `engine resume`, with the stand-in answering, both
 * items end `#done-fix`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { claudeBin, useClaudeSandbox } from '../helpers/claude-env.js';
import {
  events,
  isAlive,
  read,
  recoveries,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
  waitForText,
} from '../helpers/daemon-harness.js';
import { reply } from '../helpers/messages-api.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

// Registered before the daemon harness: after-hooks run in reverse order (vitest's "stack"), so
// the harness ends daemon and agents before the stand-in and the sandbox go (an agent that
// outlived them wrote its transcript into a sandbox already removed).
const claude = useClaudeSandbox();
const h = useDaemonHarness();

const ofKind = (kind: string) => events(h.root).filter((e) => e.event === kind);

it('an interactive agent that hits a usage limit pauses the queue, is ended, and its item goes back to #delegated-fix', async () => {
  claude.api.script(reply.rateLimit());
  await claude.sandbox.settleFirstRun(h.root);
  // Interactive Claude Code runs an unknown slash command nowhere: engine init writes /fix.
  const init = await runCli(['init', '--root', h.root]);
  expect(init.code, init.stderr).toBe(0);
  const first = await h.request('a.md', '# a\n**Tags**: #delegated-fix\n\nWork a.\n');
  const d = h.start(
    // --verbose: the daemon logs each item it holds back.
    ['--agent', 'claude', '--claude-bin', claudeBin(), '--limit-backoff', '60', '--verbose'],
    claude.sandbox.env(),
  );
  const log = () => d.output().slice(-3000);

  const claimed = await waitForText(first, (t) => /^\*\*Session\*\*: /m.test(t), {
    timeoutMs: 30_000,
    message: () => `the claim; daemon:\n${log()}`,
  });
  const dir = join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(claimed)![1]!);
  const running = await waitForState(dir, (s) => s.agentPid !== null);
  expect(running.agent).toBe('claude');

  // The hooks report the limit while the agent still runs: the queue pauses at once.
  const status = await waitFor(
    async () => {
      const out = await runCli(['status', '--root', h.root, '--json']);
      const parsed = JSON.parse(out.stdout) as { paused: { until: string; reason: string } | null };
      return parsed.paused ?? null;
    },
    { timeoutMs: 60_000, message: () => `the pause; daemon:\n${log()}` },
  );
  expect(status.reason).toMatch(/^usage limit, resets at /);
  // --limit-backoff 60: the hook gives no reset time.
  expect(Date.parse(status.until)).toBeGreaterThan(Date.now() + 50 * 60_000);
  expect(JSON.parse(readFileSync(join(dir, 'agent-state.json'), 'utf8'))).toMatchObject({
    state: 'limited',
    event: 'StopFailure',
    detail: 'rate_limit',
  });

  // A second item approved during the pause is not claimed.
  const second = await h.request('b.md', '# b\n**Tags**: #delegated-fix\n\nWork b.\n');

  // The limited agent is ended (asked to exit), and its claim goes back as a usage limit.
  const requeued = await waitForText(first, (t) => recoveries(t) === 1, {
    timeoutMs: 90_000,
    message: () => `the requeue; daemon:\n${log()}`,
  });
  expect(tagsOf(requeued), requeued).toEqual(['#delegated-fix']);
  expect(requeued).toMatch(/\*\*Reason\*\*: usage limit, resets at \S+Z/);
  expect(requeued).toContain('**Failure**: usage-limit (not an attempt)');
  const ended = await waitForState(dir, (s) => s.status === 'abandoned');
  // Asked to exit, it exited on its own (0, not a signal's 143).
  expect(ended.exitCode, log()).toBe(0);
  expect(isAlive(ended.agentPid as number)).toBe(false);
  expect(ofKind('agent-closing').map((e) => [e.step, e.reason])).toContainEqual([
    'ask',
    'usage limit',
  ]);
  // One pause, recorded once: the requeue's time is the one taken when the limit was seen.
  expect(ofKind('limit-paused'), JSON.stringify(events(h.root), null, 1)).toHaveLength(1);
  expect(ofKind('limit-paused')[0]?.until).toBe(status.until);
  // The daemon read the second item, and holds it for the pause (the item table's move).
  await waitFor(() => d.output().includes(`item ${second} #fix: queued → waiting-slot(pause)`), {
    timeoutMs: 30_000,
    message: () => `the second item held; daemon:\n${log()}`,
  });
  expect(tagsOf(await read(second))).toEqual(['#delegated-fix']);
  expect(ofKind('claimed')).toHaveLength(1);

  // Lifted by hand, with the API answering: both items run and end done.
  claude.api.script(...Array.from({ length: 6 }, () => reply.markDone()));
  const resumed = await runCli(['resume', '--root', h.root]);
  expect(resumed.code, resumed.stderr).toBe(0);
  for (const file of [first, second]) {
    const text = await waitForTag(file, ['#done-fix', '#needs-fix'], 90_000);
    expect(tagsOf(text), `${text}\ndaemon:\n${log()}`).toEqual(['#done-fix']);
  }
  expect(recoveries(await read(first))).toBe(1);
  expect(recoveries(await read(second))).toBe(0);
  expect(ofKind('claimed')).toHaveLength(3);
}, 300_000);
