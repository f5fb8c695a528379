/**
 * Request files whose names are near the 255-byte limit of a file name, and writes that fail:
 * the daemon claims and runs the first, and logs each of the second (claim, restore, requeue)
 * with the file and the error, at once.
 */
import { realpathSync } from 'node:fs';
import { rm, utimes, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { lockPathFor } from '../../src/files/update-request-file.js';
import {
  read,
  useDaemonHarness,
  waitForReady,
  waitForText,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

/**
 * Puts a regular file, older than a stale lock, where the file's lock directory goes: taking the
 * lock then fails with ENOTDIR (a failure root meets too, unlike a read-only directory).
 * Returns the function that removes it.
 */
async function blockLock(file: string): Promise<() => Promise<void>> {
  const lock = lockPathFor(realpathSync(file));
  await writeFile(lock, 'not a lock\n');
  const old = new Date(Date.now() - 60_000);
  await utimes(lock, old, old);
  return () => rm(lock);
}

/** Waits for a log line, well within the 20 s a held lock is waited for. */
function logged(d: DaemonProcess, pattern: RegExp): Promise<string> {
  return waitFor(
    () =>
      d
        .output()
        .split('\n')
        .find((line) => pattern.test(line)),
    {
      timeoutMs: 10_000,
      message: `${pattern} in the log; output:\n${d.output()}`,
    },
  );
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('long file names', () => {
  it('claims and runs requests whose names have 250 and 255 bytes, in any script', async () => {
    const d = h.start();
    await waitForReady(d);
    const names = [`${'a'.repeat(247)}.md`, `${'b'.repeat(252)}.md`, `${'é'.repeat(126)}.md`];
    expect(names.map((name) => Buffer.byteLength(name))).toEqual([250, 255, 255]);
    const files = names.map((name) => h.file(name));
    await Promise.all(files.map((file) => writeFile(file, '# L\n**Tags**: #delegated-fix\n')));
    for (const file of files) {
      await waitForText(file, '#done-fix', {
        message: `${file} done; output:\n${d.output()}`,
      });
    }
    expect(
      h
        .agents()
        .map((a) => a.file)
        .sort(),
    ).toEqual([...files].sort());
    expect(d.output()).not.toMatch(/ERROR|WARN/);
  });
});

describe('a write that fails is logged with the file and the error', () => {
  it('a claim', async () => {
    const d = h.start();
    await waitForReady(d);
    const file = await h.request('BLOCKED.md', '# B\n');
    const unblock = await blockLock(file);
    await writeFile(file, '# B\n**Tags**: #delegated-fix\n');
    const line = await logged(d, /could not claim/);
    expect(line).toMatch(
      new RegExp(`ERROR +could not claim ${escape(file)} \\(#delegated-fix\\): .*ENOTDIR`),
    );
    expect(await read(file)).toBe('# B\n**Tags**: #delegated-fix\n');
    // Still approved: dispatched once its file changes again.
    await unblock();
    await writeFile(file, '# B\n**Tags**: #delegated-fix\n\nAgain.\n');
    await waitForText(file, '#done-fix');
    expect(h.agents()).toHaveLength(1);
  });

  it('a claim in --once, which goes on with the other items', async () => {
    const blocked = h.file('A-BLOCKED.md');
    const free = h.file('B-FREE.md');
    await writeFile(blocked, '# A\n**Tags**: #delegated-fix\n');
    await writeFile(free, '# B\n**Tags**: #delegated-fix\n');
    await blockLock(blocked);
    const once = h.start(['--once', '--debounce-ms', '0']);
    expect(await once.exited).toBe(0);
    expect(once.output()).toMatch(
      new RegExp(`ERROR +could not claim ${escape(blocked)} \\(#delegated-fix\\): .*ENOTDIR`),
    );
    await waitForText(free, '#done-fix');
    expect(await read(blocked)).toBe('# A\n**Tags**: #delegated-fix\n');
  });

  it('a restore and a requeue', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const restored = h.file('RESTORE.md');
    const requeued = h.file('REQUEUE.md');
    const original = '# R\n**Tags**: #delegated-fix\n';
    await writeFile(restored, original);
    await writeFile(requeued, original);
    const agents = await h.waitForAgents(2);
    for (const file of [restored, requeued]) {
      await waitForText(file, '#claimed-fix');
    }

    // An editor saves an older copy over a live claim, whose lock cannot be taken.
    const unblockRestore = await blockLock(restored);
    await writeFile(restored, `${original}A human line.\n`);
    const restoreLine = await logged(d, /could not restore/);
    expect(restoreLine).toMatch(
      new RegExp(
        `ERROR +.*could not restore the claim on ${escape(restored)} \\(#claimed-fix, sessions/[^)]+\\): .*ENOTDIR`,
      ),
    );

    // The agent of the other item dies without marking it done: its requeue cannot be written.
    const unblockRequeue = await blockLock(requeued);
    const agent = agents.find((a) => a.file === requeued);
    process.kill(agent!.pid, 'SIGKILL');
    const requeueLine = await logged(d, /could not requeue/);
    expect(requeueLine).toMatch(
      new RegExp(
        `ERROR +.*could not requeue ${escape(requeued)} \\(#claimed-fix, sessions/[^)]+\\): .*ENOTDIR`,
      ),
    );
    expect(await read(requeued)).toContain('#claimed-fix');
    // Once the lock can be taken, the requeue goes through.
    await unblockRequeue();
    await waitForText(requeued, '#needs-fix', {
      message: `requeued; output:\n${d.output()}`,
    });
    // The restore that failed left the item approved, and no second agent over the live one.
    expect(await read(restored)).toBe(`${original}A human line.\n`);
    expect(h.agents()).toHaveLength(2);
    await unblockRestore();
  });
});
