/**
 * `engine retry FILE` with a real daemon and the built CLI: a human's approval that waits for no
 * backoff. A given-up item, and a `#delegated-X` item held by a retry's Not Before, are claimed at
 * once; what cannot be retried is refused and left as it was.
 */
import { expect, it } from 'vitest';
import {
  events,
  read,
  rootArgs,
  recoveries,
  useDaemonHarness,
  waitForReady,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

it('a given-up item goes back to #delegated-X with a retry entry and is claimed at once', async () => {
  const d = h.start(['--retries', '1', '--retry-backoff-ms', '100'], { TEST_AGENT_MODE: 'exit' });
  await waitForReady(d);
  const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const gaveUp = await waitForTag(file, ['#needs-fix'], 60_000);
  expect(gaveUp).toContain('gave up after 2 attempts');
  expect(h.agents()).toHaveLength(2);

  const result = await runCli(['retry', file]);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe(
    `Retried ${file}: #needs-fix -> #delegated-fix, claimed as soon as a daemon may, with no backoff\n`,
  );
  const retried = Date.now();
  await h.waitForAgents(3);
  expect(h.agents()[2]!.time - retried).toBeLessThan(10_000);
  expect(h.agents()[2]!.attempt).toBe('3');
  // Its retries are spent: the third failure goes to a human at once.
  const again = await waitForTag(file, ['#needs-fix'], 60_000);
  expect(recoveries(again)).toBe(4);
  expect(again).toContain('**Reason**: retried by hand (engine retry)');
  expect(again).toContain('**Failure**: none (not an attempt)');
  expect(events(h.root).filter((e) => e.event === 'retried')).toMatchObject([
    { noun: 'fix', from: '#needs-fix', to: '#delegated-fix', heldUntil: null },
  ]);
});

it("a #delegated-X item held by a retry's Not Before an hour away is claimed at once", async () => {
  const notBefore = new Date(Date.now() + 3_600_000).toISOString();
  const text = [
    '# R',
    '**Tags**: #delegated-fix',
    '',
    'The bug.',
    '',
    '## Recovery',
    '*   **Date**: 2026-01-01T00:00:00.000Z',
    '*   **Reason**: agent exited with code 3; retry 1 of 2',
    '*   **Prior Session**: sessions/2026_01_01_000000_FIX_r_abcd/',
    '*   **Action**: Back to `#delegated-fix`, dispatched again without a new approval',
    '*   **Failure**: agent',
    `*   **Not Before**: ${notBefore}`,
    '*   **Attempt**: 1',
    '',
  ].join('\n');
  const file = await h.request('REQ.md', text);
  const dry = await runCli(['run', '--monitor-tags', '--dry-run', ...rootArgs(h.testRoot)]);
  expect(dry.stdout, dry.stderr).toContain("(a retry's backoff: ready in ");
  const d = h.start([], { TEST_AGENT_MODE: 'hold' });
  await waitForReady(d);

  const result = await runCli(['retry', file, '--json']);
  expect(result.code, result.stderr).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({
    from: '#delegated-fix',
    to: '#delegated-fix',
    heldUntil: notBefore,
  });
  await waitForTag(file, ['#claimed-fix'], 10_000);
  const [agent] = await h.waitForAgents(1);
  expect(agent!.attempt).toBe('2');
});

it('refuses what cannot be retried, and writes nothing', async () => {
  const cases: Array<[string, string]> = [
    [
      '# R\n**Tags**: #delegated-fix\n',
      "is #delegated-fix already and no retry's Not Before holds it",
    ],
    [
      '# R\n**Tags**: #claimed-fix\n',
      'carries #claimed-fix on its Tags line or front matter, not #needs-* or #delegated-*',
    ],
    ['# R\n**Tags**: #done-fix\n', 'carries #done-fix on its Tags line'],
    [
      '# R\n**Tags**: #needs-fix #needs-docs\n',
      'carries #needs-fix #needs-docs: name one with --noun',
    ],
  ];
  for (const [text, message] of cases) {
    const file = await h.request('REQ.md', text);
    const result = await runCli(['retry', file, '--root', h.root]);
    expect(result.code, text).toBe(1);
    expect(result.stderr, text).toContain(message);
    expect(await read(file)).toBe(text);
  }
  const file = await h.request('REQ.md', '# R\n**Tags**: #needs-fix #needs-docs\n');
  const one = await runCli(['retry', file, '--noun', 'docs']);
  expect(one.code, one.stderr).toBe(0);
  // Without Recovery entries, nothing holds it: the plain approval, no entry.
  expect(await read(file)).toBe('# R\n**Tags**: #needs-fix #delegated-docs\n');
  await waitFor(() => events(h.root).some((e) => e.event === 'retried'), { message: 'the event' });
});
