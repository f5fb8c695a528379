/**
 * Bounded retries (`--retries N`): an agent that always fails is started N + 1 times, with a
 * growing wait between, then its item goes to `#needs-X` for a human ("gave up after ...").
 */
import { expect, it } from 'vitest';
import {
  events,
  recoveries,
  tagsOf,
  useDaemonHarness,
  waitForReady,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

it('with --retries 2, an agent that always fails runs three times, then the item is in #needs-X with "gave up"', async () => {
  // The test agent's `exit` mode exits 3 without marking done.
  const d = h.start(['--retries', '2', '--retry-backoff-ms', '400'], { TEST_AGENT_MODE: 'exit' });
  await waitForReady(d);
  const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n\nKeep this line.\n');

  const text = await waitForTag(file, ['#needs-fix'], 90_000);
  expect(tagsOf(text)).toEqual(['#needs-fix']);
  expect(text).toContain('Keep this line.');
  expect(recoveries(text)).toBe(3);
  expect(text).toContain(
    '**Reason**: agent exited with code 3 without marking `#done-fix`; retry 1 of 2',
  );
  expect(text).toContain('; retry 2 of 2');
  expect(text).toContain('; gave up after 3 attempts');
  expect(text.match(/\*\*Attempt\*\*: \d/g)).toEqual([
    '**Attempt**: 1',
    '**Attempt**: 2',
    '**Attempt**: 3',
  ]);
  expect(h.agents()).toHaveLength(3);
  expect(h.agents().map((a) => a.attempt)).toEqual(['1', '2', '3']);

  // The events follow the file's write: wait for the last ones.
  await waitFor(() => events(h.root).some((e) => e.event === 'gave-up'), {
    message: 'the gave-up event',
  });
  // Each retry waited its backoff, doubling (400 ms, then 800 ms): not claimed before it.
  const log = events(h.root) as Array<
    ReturnType<typeof events>[number] & { time: string; notBefore?: string }
  >;
  const requeues = log.filter((e) => e.event === 'requeued');
  const claims = log.filter((e) => e.event === 'claimed');
  expect(claims).toHaveLength(3);
  const dates = [...text.matchAll(/\*\*Date\*\*: (\S+)/g)].map((m) => Date.parse(m[1]!));
  const notBefore = [...text.matchAll(/\*\*Not Before\*\*: (\S+)/g)].map((m) => Date.parse(m[1]!));
  expect(notBefore).toHaveLength(2);
  expect(notBefore.map((t, i) => t - dates[i]!)).toEqual([400, 800]);
  expect(requeues.map((e) => e.notBefore)).toEqual([
    ...notBefore.map((t) => new Date(t).toISOString()),
    undefined,
  ]);
  expect(Date.parse(claims[1]!.time)).toBeGreaterThanOrEqual(notBefore[0]!);
  expect(Date.parse(claims[2]!.time)).toBeGreaterThanOrEqual(notBefore[1]!);
  const gaveUp = log.filter((e) => e.event === 'gave-up');
  expect(gaveUp).toHaveLength(1);
  expect(gaveUp[0]).toMatchObject({
    noun: 'fix',
    reason: expect.stringContaining('gave up after 3 attempts'),
  });

  // Nothing loops: no fourth start, however long it waits.
  await d.stop();
  expect(h.agents()).toHaveLength(3);
});
