/**
 * --log-file: the daemon's log appended to a file instead of stderr, moved to FILE.1 at its cap.
 */
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLogFile } from '../../src/service/log-file.js';
import { useDaemonHarness } from '../helpers/daemon-harness.js';

describe('openLogFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-log-file-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('appends to what the file holds, and moves it to .1 when a line would pass the cap', async () => {
    const path = join(dir, 'logs', 'daemon.log');
    const first = openLogFile(path, 30);
    first.write('line 1 of ten b\n');
    // Opened again (a restart): the size counts what is there already.
    const log = openLogFile(path, 30);
    log.write('line 2 of ten\n');
    expect(await readFile(path, 'utf8')).toBe('line 1 of ten b\nline 2 of ten\n');
    log.write('line 3\n');
    expect(await readFile(`${path}.1`, 'utf8')).toBe('line 1 of ten b\nline 2 of ten\n');
    expect(await readFile(path, 'utf8')).toBe('line 3\n');
    log.write('line 4 is long enough now\n');
    log.write('line 5 is long enough now\n');
    // The older .1 is replaced: two files at most.
    expect(await readFile(`${path}.1`, 'utf8')).toBe('line 4 is long enough now\n');
    expect(await readFile(path, 'utf8')).toBe('line 5 is long enough now\n');
    expect(existsSync(`${path}.2`)).toBe(false);
  });

  it('goes on appending to the open file when PATH.1 cannot be replaced, closing no other file', async () => {
    const path = join(dir, 'daemon.log');
    // A non-empty directory at PATH.1: the rename fails.
    await mkdir(join(dir, 'daemon.log.1'));
    await writeFile(join(dir, 'daemon.log.1', 'keep'), 'x');
    const log = openLogFile(path, 20);
    log.write('line 1 is long\n');
    log.write('line 2 is long\n');
    // A file opened after the failed move: later log lines must not close its descriptor.
    const other = openSync(join(dir, 'other'), 'a');
    try {
      log.write('line 3 is long\n');
      log.write('line 4 is long\n');
      writeSync(other, 'still open\n');
    } finally {
      closeSync(other);
    }
    const text = await readFile(path, 'utf8');
    expect(text.match(/line \d is long/g)).toEqual([
      'line 1 is long',
      'line 2 is long',
      'line 3 is long',
      'line 4 is long',
    ]);
    expect(text.match(/cannot move the log file/g)).toHaveLength(1);
    expect(await readFile(join(dir, 'other'), 'utf8')).toBe('still open\n');
  });

  it('says which file it cannot open', async () => {
    await writeFile(join(dir, 'plain'), 'x');
    expect(() => openLogFile(join(dir, 'plain', 'daemon.log'))).toThrow(
      `cannot open the log file ${join(dir, 'plain', 'daemon.log')}`,
    );
  });
});

describe('engine run --log-file', () => {
  const h = useDaemonHarness();

  it("appends the daemon's log to the file, from the root, instead of stderr", async () => {
    await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const { code, output } = await h.once(['--debounce-ms', '0', '--log-file', 'logs/daemon.log']);
    expect(code, output).toBe(0);
    const log = await readFile(join(h.root, 'logs', 'daemon.log'), 'utf8');
    expect(log).toMatch(/INFO {2}claimed .*REQ\.md \(#claimed-fix\)/);
    expect(output).not.toContain('claimed');
  });

  it('takes logFile from engine.json, and refuses a file it cannot open with exit 1', async () => {
    await writeFile(join(h.root, 'directives', 'engine.json'), '{"logFile": "TAGS.md/log"}\n');
    await writeFile(join(h.root, 'TAGS.md'), 'not a directory');
    const { code, output } = await h.once();
    expect(code).toBe(1);
    expect(output).toContain(`ERROR: cannot open the log file ${join(h.root, 'TAGS.md', 'log')}`);
  });
});
