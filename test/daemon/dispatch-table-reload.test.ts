import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  TEST_TAGS_MD,
  useDaemonHarness,
  waitForReady,
  waitForText,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

const NEW_ROW = '| `#delegated-newnoun` | `/newnoun` | agent | 2 | yes |\n';
const tagsPath = () => join(h.root, 'directives', 'TAGS.md');
const count = (text: string, part: string) => text.split(part).length - 1;

const request = (name: string, noun: string) =>
  h.request(name, `# ${name}\n**Tags**: #delegated-${noun}\n`);

/** The agent ran for the item and marked it done. */
async function dispatched(file: string, noun: string): Promise<void> {
  await waitForText(file, `#done-${noun}`);
  expect(
    h
      .agents()
      .filter((a) => a.noun === noun)
      .map((a) => a.file),
  ).toEqual([file]);
}

describe('§TAG_DISPATCH reload while the daemon runs', () => {
  it('a row added to directives/TAGS.md dispatches the item that waited for it', async () => {
    const waiting = await request('NEW.md', 'newnoun');
    await request('OTHER.md', 'othernoun');
    // A watch event lost while the table's watch opens is made up for by the periodic check.
    const d = h.start(['--rescan-interval-ms', '500']);
    await waitForReady(d);
    await waitFor(() => d.output().includes('#delegated-newnoun has no row in §TAG_DISPATCH'));

    // An unchanged re-save changes nothing: no reload, no second warning.
    await writeFile(tagsPath(), TEST_TAGS_MD);
    await waitFor(() => d.output().includes('TAGS.md saved unchanged'));
    expect(d.output()).not.toContain('reloaded §TAG_DISPATCH');

    await writeFile(tagsPath(), TEST_TAGS_MD + NEW_ROW);
    await dispatched(waiting, 'newnoun');
    expect(count(d.output(), 'reloaded §TAG_DISPATCH')).toBe(1);
    // Under the new table the item still without a row is warned about again, once.
    await waitFor(() => count(d.output(), '#delegated-othernoun has no row') === 2);
    expect(count(d.output(), '#delegated-newnoun has no row')).toBe(1);
  });

  it('a malformed edit keeps the old table in force and logs file:line, once', async () => {
    // Frequent periodic checks: the broken text is read many times, and logged only once.
    const d = h.start(['--rescan-interval-ms', '200']);
    await waitForReady(d);
    // Line 12: the new row's priority is not a number.
    await writeFile(tagsPath(), TEST_TAGS_MD + NEW_ROW.replace('| 2 |', '| soon |'));
    await waitFor(() => d.output().includes(`${tagsPath()}:12: priority 'soon' is not a number`));
    expect(d.output()).toMatch(/ERROR .*TAGS\.md:12: .*the §TAG_DISPATCH table in force stays/);
    const fix = await request('FIX.md', 'fix');
    await dispatched(fix, 'fix');
    const waiting = await request('NEW.md', 'newnoun');
    await waitFor(() => d.output().includes('#delegated-newnoun has no row'));

    // Corrected, the table takes effect and the item that waited is dispatched.
    await writeFile(tagsPath(), TEST_TAGS_MD + NEW_ROW);
    await dispatched(waiting, 'newnoun');
    expect(count(d.output(), ":12: priority 'soon'")).toBe(1);
  });

  it('TAGS.md deleted keeps the old table; a re-created directives/ is read again', async () => {
    const d = h.start();
    await waitForReady(d);
    await rm(join(h.root, 'directives'), { recursive: true });
    await waitFor(() => d.output().includes(`cannot read ${tagsPath()} (ENOENT)`));
    expect(d.output()).toMatch(/ERROR .*the §TAG_DISPATCH table in force stays/);
    const fix = await request('FIX.md', 'fix');
    await dispatched(fix, 'fix');
    const waiting = await request('NEW.md', 'newnoun');
    await waitFor(() => d.output().includes('#delegated-newnoun has no row'));

    await mkdir(join(h.root, 'directives'));
    await writeFile(tagsPath(), TEST_TAGS_MD + NEW_ROW);
    await dispatched(waiting, 'newnoun');
  });

  it('with --no-watch, the periodic check reloads the table', async () => {
    const waiting = await request('NEW.md', 'newnoun');
    const d = h.start(['--no-watch', '--rescan-interval-ms', '300']);
    await waitForReady(d);
    await waitFor(() => d.output().includes('#delegated-newnoun has no row'));
    await writeFile(tagsPath(), TEST_TAGS_MD + NEW_ROW);
    await dispatched(waiting, 'newnoun');
  });
});
