/**
 * A request whose Tags line holds two lifecycle states of one noun, written by hand
 * (`#done-fix #delegated-fix`): the daemon never claims it (a claim would leave `#done-fix
 * #claimed-fix` and report `done` while the agent works), warns once naming it and why, and runs
 * it once a human keeps one state.
 */
import { writeFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import {
  events,
  read,
  useDaemonHarness,
  waitForReady,
  waitForText,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

it('is never dispatched: no claim, no done event, one warning naming it; kept to one state, it runs', async () => {
  const d = h.start();
  await waitForReady(d);
  const text = '# Twice\n**Tags**: #done-fix #delegated-fix\n';
  const file = await h.request('TWICE.md', text);
  // A sound request beside it is dispatched and done, so the daemon read both.
  const other = await h.request('OTHER.md', '# Other\n**Tags**: #delegated-fix\n');
  await waitForText(other, '#done-fix', { message: () => d.output() });
  const warning =
    /not dispatching \S*TWICE\.md: it holds #done-fix #delegated-fix on its Tags line or front matter, two lifecycle states of one noun/;
  await waitFor(() => warning.test(d.output()), { message: () => d.output() });
  expect(await read(file)).toBe(text);
  expect(h.agents()).toHaveLength(1);
  expect(events(h.root).filter((e) => e.file?.endsWith('TWICE.md'))).toEqual([]);
  // Not even tried: the claim's own refusal is the last line of defence.
  expect(d.output()).not.toMatch(/could not claim \S*TWICE\.md/);
  // A change to the file reads it again: still refused, and not warned about twice.
  await writeFile(file, `${text}\nMore text.\n`);
  const removed = await runCli(['tag', 'remove', file, '#done-fix'], { cwd: h.root });
  expect(removed.code).toBe(0);
  await waitForText(file, '#done-fix', { message: () => d.output() });
  expect(h.agents()).toHaveLength(2);
  expect(d.output().match(new RegExp(warning.source, 'g'))).toHaveLength(1);
  // The event follows the file's write.
  const done = () =>
    events(h.root).filter((e) => e.event === 'done' && e.file?.endsWith('TWICE.md'));
  await waitFor(() => done().length > 0, { message: () => d.output() });
  expect(done()).toHaveLength(1);
});
