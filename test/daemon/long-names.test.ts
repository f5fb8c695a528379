/**
 * Request files whose names are near the 255-byte limit of a file name, and writes that fail:
 * the daemon claims and runs the first, and logs each of the second (claim, restore, requeue)
 * with the file and the error, at once.
 */
import { realpathSync } from 'node:fs';
import { readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockPathFor } from '../../src/files/update-request-file.js';
import {
  agentStarts,
  makeRoot,
  startDaemon,
  waitForReady,
  type DaemonProcess,
  type TestRoot,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

let t: TestRoot;
let daemons: DaemonProcess[] = [];

afterEach(async () => {
  for (const d of daemons) if (d.child.exitCode === null) await d.kill9();
  daemons = [];
  await t?.cleanup();
});

function start(env: Record<string, string> = {}, extra: string[] = []): DaemonProcess {
  const d = startDaemon(t, extra, env);
  daemons.push(d);
  return d;
}

const read = (file: string) => readFile(file, 'utf8');

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
    t = await makeRoot();
    const d = start();
    await waitForReady(d);
    const names = [`${'a'.repeat(247)}.md`, `${'b'.repeat(252)}.md`, `${'é'.repeat(126)}.md`];
    expect(names.map((name) => Buffer.byteLength(name))).toEqual([250, 255, 255]);
    const files = names.map((name) => join(t.sessions, name));
    await Promise.all(files.map((file) => writeFile(file, '# L\n**Tags**: #delegated-fix\n')));
    for (const file of files) {
      await waitFor(async () => (await read(file)).includes('#done-fix'), {
        message: `${file} done; output:\n${d.output()}`,
      });
    }
    expect(
      agentStarts(t)
        .map((a) => a.file)
        .sort(),
    ).toEqual([...files].sort());
    expect(d.output()).not.toMatch(/ERROR|WARN/);
  });
});

describe('a write that fails is logged with the file and the error', () => {
  it('a claim', async () => {
    t = await makeRoot();
    const d = start();
    await waitForReady(d);
    const file = join(t.sessions, 'BLOCKED.md');
    await writeFile(file, '# B\n');
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
    await waitFor(async () => (await read(file)).includes('#done-fix'));
    expect(agentStarts(t)).toHaveLength(1);
  });

  it('a claim in --once, which goes on with the other items', async () => {
    t = await makeRoot();
    const blocked = join(t.sessions, 'A-BLOCKED.md');
    const free = join(t.sessions, 'B-FREE.md');
    await writeFile(blocked, '# A\n**Tags**: #delegated-fix\n');
    await writeFile(free, '# B\n**Tags**: #delegated-fix\n');
    await blockLock(blocked);
    const once = start({}, ['--once', '--debounce-ms', '0']);
    expect(await once.exited).toBe(0);
    expect(once.output()).toMatch(
      new RegExp(`ERROR +could not claim ${escape(blocked)} \\(#delegated-fix\\): .*ENOTDIR`),
    );
    await waitFor(async () => (await read(free)).includes('#done-fix'));
    expect(await read(blocked)).toBe('# A\n**Tags**: #delegated-fix\n');
  });

  it('a restore and a requeue', async () => {
    t = await makeRoot();
    const d = start({ TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const restored = join(t.sessions, 'RESTORE.md');
    const requeued = join(t.sessions, 'REQUEUE.md');
    const original = '# R\n**Tags**: #delegated-fix\n';
    await writeFile(restored, original);
    await writeFile(requeued, original);
    const agents = await waitFor(() => agentStarts(t).length === 2 && agentStarts(t));
    for (const file of [restored, requeued]) {
      await waitFor(async () => (await read(file)).includes('#claimed-fix'));
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
    await waitFor(async () => (await read(requeued)).includes('#needs-fix'), {
      message: `requeued; output:\n${d.output()}`,
    });
    // The restore that failed left the item approved, and no second agent over the live one.
    expect(await read(restored)).toBe(`${original}A human line.\n`);
    expect(agentStarts(t)).toHaveLength(2);
    await unblockRestore();
  });
});
