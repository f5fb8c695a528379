/** The real probe of `engine doctor` on real files and sockets. */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { daemonLockPath } from '../../src/daemon/daemon-lock.js';
import { checkDaemonLock } from '../../src/doctor/project-checks.js';
import { systemDoctorProbe } from '../../src/doctor/system-probe.js';
import { contextOf } from './doctor-context.js';

describe('systemDoctorProbe', () => {
  let dir: string;
  const probe = systemDoctorProbe();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-doctor-probe-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a listening socket answers; a file nobody listens on does not; no file is null', async () => {
    const path = join(dir, 'control.sock');
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      expect(await probe.socketAnswers(path)).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    await writeFile(join(dir, 'stale.sock'), '');
    expect(await probe.socketAnswers(join(dir, 'stale.sock'))).toBe(false);
    expect(await probe.socketAnswers(join(dir, 'none.sock'))).toBeNull();
  });

  it('readText: null only for a missing file; an unreadable one is an error naming it, and the lock check WARNs', async () => {
    expect(await probe.readText(join(dir, 'none'))).toBeNull();
    // A directory where the lock should be: unreadable as a file, whoever runs the test (root too).
    const lock = daemonLockPath(dir);
    await mkdir(lock, { recursive: true });
    await expect(probe.readText(lock)).rejects.toThrow(`cannot read ${lock}: EISDIR`);
    const result = await checkDaemonLock(contextOf({ root: dir, probe }));
    expect(result).toMatchObject({ status: 'WARN', summary: expect.stringContaining(lock) });
  });

  it('writeStamp dates a file between two clock reads and leaves nothing behind', async () => {
    const stamp = await probe.writeStamp(dir);
    expect(stamp.before).toBeLessThanOrEqual(stamp.after);
    expect(Math.abs(stamp.mtime - stamp.before)).toBeLessThan(2_000);
    expect(await readdir(dir)).toEqual([]);
  });

  it('watchesNeeded: one per directory; chokidar one per markdown file too; ignored folders skipped', async () => {
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    await mkdir(join(dir, 'node_modules', 'x'), { recursive: true });
    await writeFile(join(dir, 'a', 'one.md'), '');
    await writeFile(join(dir, 'a', 'b', 'two.md'), '');
    await writeFile(join(dir, 'a', 'skip.txt'), '');
    expect(await probe.watchesNeeded([dir], 'parcel')).toBe(3);
    expect(await probe.watchesNeeded([dir], 'chokidar')).toBe(5);
  });
});
