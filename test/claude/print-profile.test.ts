/**
 * `engine run --monitor-tags --agent claude-print` with the real Claude Code CLI, its Messages API
 * the stand-in: the session id, the transcript, the agent's output in `engine logs`, the run's
 * `result` in `.state.json` and `engine status`, and the requeue of a run that did not mark done.
 */
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { claudeBin, parseStream, useClaudeSandbox } from '../helpers/claude-env.js';
import {
  recoveries,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { reply } from '../helpers/messages-api.js';
import { runCli } from '../helpers/run-cli.js';

// Registered before the daemon harness: after-hooks run in reverse order (vitest's "stack"), so
// the harness ends daemon and agents before the stand-in and the sandbox go (an agent that
// outlived them wrote its transcript into a sandbox already removed).
const claude = useClaudeSandbox();
const h = useDaemonHarness();

const REQUEST = '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n';
const start = () =>
  h.start(['--agent', 'claude-print', '--claude-bin', claudeBin()], claude.sandbox.env());

it('claude-print marks the item done; records its session id, transcript and result', async () => {
  claude.api.script(
    reply.bash(
      'engine tag swap "$ENGINE_REQUEST_FILE" "#claimed-$ENGINE_NOUN" "#done-$ENGINE_NOUN"',
    ),
    reply.text('Marked it done.'),
  );
  const file = await h.request('fix-me.md', REQUEST);

  const d = start();

  const done = await waitForTag(file, ['#done-fix', '#needs-fix'], 45_000);
  expect(tagsOf(done), `${done}\ndaemon:\n${d.output().slice(-3000)}`).toEqual(['#done-fix']);
  const ref = /^\*\*Session\*\*: (.+)$/m.exec(done)![1]!;
  const dir = join(h.root, ref);
  const state = await waitForState(dir, (s) => s.status === 'exited');
  expect(state.exitCode).toBe(0);

  const sessionId = state.agentSessionId as string;
  expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(existsSync(claude.sandbox.transcript(realpathSync(h.root), sessionId))).toBe(true);
  expect(state.result, JSON.stringify(state)).toMatchObject({
    terminalReason: 'completed',
    isError: false,
    numTurns: 2,
    apiErrorStatus: null,
    sessionId,
  });
  const result = state.result as { costUsd: unknown; durationMs: unknown };
  expect(typeof result.costUsd).toBe('number');
  expect(typeof result.durationMs).toBe('number');

  const logs = await runCli(['logs', '--raw', file, '--root', h.root]);
  expect(logs.code, logs.stderr).toBe(0);
  // The terminal's bytes: \r\n line ends and the CLI's cursor controls around the JSON lines.
  const json = logs.stdout.split(/\r?\n/).filter((l) => l.startsWith('{'));
  const lines = parseStream(json.join('\n'));
  expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init', session_id: sessionId });
  expect(lines.at(-1)).toMatchObject({ type: 'result', result: 'Marked it done.' });
  // As text: the conversation.
  const conversation = await runCli(['logs', file, '--root', h.root]);
  expect(conversation.stdout.split('\n').slice(1)).toEqual([
    '● Bash(engine tag swap "$ENGINE_REQUEST_FILE" "#claimed-$ENGINE_NOUN" "#done-$ENGINE_NOUN")',
    expect.stringMatching(/^ {2}⎿/),
    '● Marked it done.',
    expect.stringMatching(/^Result: success \(completed\), 2 turns, \$\d+\.\d{4}, \d+\.\d s$/),
    '',
  ]);

  const status = await runCli(['status', '--root', h.root, '--json']);
  const report = JSON.parse(status.stdout) as { done: { session?: string; result: unknown }[] };
  expect(report.done.find((e) => e.session === ref)?.result).toMatchObject({ numTurns: 2 });
  const text = await runCli(['status', '--root', h.root]);
  expect(text.stdout).toMatch(/cost \$\d+\.\d{4} {2}2 turns/);
});

it('claude-print that ends without marking done is requeued with a Recovery entry', async () => {
  claude.api.script(reply.text('I looked, but did nothing.'));
  const file = await h.request('fix-me.md', REQUEST);

  const d = start();

  const requeued = await waitForTag(file, ['#done-fix', '#needs-fix'], 45_000);
  expect(tagsOf(requeued), `${requeued}\ndaemon:\n${d.output().slice(-3000)}`).toEqual([
    '#needs-fix',
  ]);
  expect(recoveries(requeued)).toBe(1);
  expect(requeued).toMatch(/^## Recovery/m);
  // The requeue records the exit too, with the run's result.
  const ref = /\*\*Prior Session\*\*: (\S+?)\/?$/m.exec(requeued)?.[1];
  expect(ref, requeued).toBeDefined();
  const state = await waitForState(join(h.root, ref!), (s) => s.status === 'abandoned');
  expect(state.result, JSON.stringify(state)).toMatchObject({ terminalReason: 'completed' });
});
