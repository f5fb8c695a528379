/**
 * `engine await-tag` as a real process: it must wake on a file watch (a temp+rename save, an
 * in-place write, a file that appears), time out with a message, and always exit.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, unlink, writeFile, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

interface Waiter {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

let dir: string;
const started: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-await-'));
});

afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  await rm(dir, { recursive: true, force: true });
});

function startAwait(args: string[]): Waiter {
  const child = spawn(process.execPath, [CLI, 'await-tag', ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => resolve(code)),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Starts `await-tag --verbose` and waits until its watch is ready (the tag still absent). */
async function startWatching(args: string[]): Promise<Waiter> {
  const waiter = startAwait([...args, '--verbose']);
  let code: number | null | undefined;
  void waiter.exited.then((c) => (code = c));
  await waitFor(() => waiter.stderr().includes('waiting for ') || code !== undefined, {
    message: 'await-tag to start watching',
  });
  expect(code, `exited early: ${waiter.stderr()}`).toBeUndefined();
  return waiter;
}

/** The exit code, or a failure when the process has not exited by the deadline. */
async function exitWithin(waiter: Waiter, ms = 10_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no exit within ${ms} ms; stderr: ${waiter.stderr()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([waiter.exited, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const WITHOUT = '# Fix it\n**Tags**: #claimed-fix\n\nBody mentions `#done-fix` in code.\n';
const WITH = '# Fix it\n**Tags**: #done-fix\n\nBody mentions `#done-fix` in code.\n';

describe('engine await-tag <file> <#tag>', () => {
  it('exits 0 at once, silently, when the tag is already there', async () => {
    await writeFile(join(dir, 'r.md'), WITH);
    const result = await runCli(['await-tag', 'r.md', '#done-fix'], { cwd: dir });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('--timeout 0 checks once: present exits 0, absent exits 1', async () => {
    await writeFile(join(dir, 'r.md'), WITH);
    expect(
      (await runCli(['await-tag', 'r.md', '#done-fix', '--timeout', '0'], { cwd: dir })).code,
    ).toBe(0);
    const absent = await runCli(['await-tag', 'r.md', '#claimed-fix', '--timeout', '0'], {
      cwd: dir,
    });
    expect(absent.code).toBe(1);
    expect(absent.stderr).toBe("ERROR: Timed out after 0 s waiting for '#claimed-fix' in r.md\n");
  });

  it('wakes on an editor-style save (write a temp file, rename it over the original)', async () => {
    const file = join(dir, 'r.md');
    await writeFile(file, WITHOUT);
    const waiter = await startWatching(['r.md', '#done-fix']);
    await writeFile(join(dir, '.r.md.swp'), WITH);
    await rename(join(dir, '.r.md.swp'), file);
    expect(await exitWithin(waiter)).toBe(0);
    expect(waiter.stdout()).toBe('');
  });

  it('wakes on an in-place write, for a tag inline in prose', async () => {
    const file = join(dir, 'r.md');
    await writeFile(file, WITHOUT);
    const waiter = await startWatching(['r.md', '#reviewed']);
    const handle = await open(file, 'r+');
    try {
      await handle.truncate(0);
      await handle.write(`${WITHOUT}\n- [x] step one #reviewed\n`, 0);
    } finally {
      await handle.close();
    }
    expect(await exitWithin(waiter)).toBe(0);
  });

  it('waits for a lifecycle tag on the Tags line or in front matter: a mention in prose is no state', async () => {
    const file = join(dir, 'r.md');
    const mentioned = `${WITHOUT}\nThe agent noted: marked #done-fix.\n`;
    await writeFile(file, mentioned);
    const once = await runCli(['await-tag', 'r.md', '#done-fix', '--timeout', '0'], { cwd: dir });
    expect(once.code).toBe(1);
    const waiter = await startWatching(['r.md', '#done-fix']);
    await writeFile(file, `${mentioned}- [x] step one #done-fix\n`);
    await writeFile(file, mentioned.replace('#claimed-fix', '#done-fix'));
    expect(await exitWithin(waiter)).toBe(0);
    await writeFile(file, `---\ntags: [done-fix]\n---\n# Fix it\n`);
    const matter = await runCli(['await-tag', 'r.md', '#done-fix', '--timeout', '0'], { cwd: dir });
    expect(matter.code).toBe(0);
    // --dir reads the same way.
    await mkdir(join(dir, 'sessions'));
    await writeFile(join(dir, 'sessions', 'm.md'), mentioned);
    const inDir = await runCli(['await-tag', '--dir', 'sessions', '#done-fix', '--timeout', '0'], {
      cwd: dir,
    });
    expect(inDir.code).toBe(1);
  });

  it('keeps waiting through writes without the tag, then wakes on the one with it', async () => {
    const file = join(dir, 'r.md');
    await writeFile(file, WITHOUT);
    const waiter = await startWatching(['r.md', '#done-fix']);
    // A reference in code is not a tag: the waiter checks this write and keeps waiting.
    await writeFile(file, `${WITHOUT}\n\`\`\`\n**Tags**: #done-fix\n\`\`\`\n`);
    await writeFile(file, WITH);
    expect(await exitWithin(waiter)).toBe(0);
  });

  it('ends with an error, instead of blocking, when the file is replaced by a FIFO', async () => {
    await writeFile(join(dir, 'r.md'), WITHOUT);
    const waiter = await startWatching(['r.md', '#done-fix']);
    await unlink(join(dir, 'r.md'));
    execFileSync('mkfifo', [join(dir, 'r.md')]);
    expect(await exitWithin(waiter)).toBe(1);
    expect(waiter.stderr()).toMatch(/ERROR: Not a regular file: r\.md\n$/);
  });

  it('waits for a file that does not exist yet', async () => {
    const waiter = await startWatching(['later.md', '#done-fix']);
    await writeFile(join(dir, '.later.tmp'), WITH);
    await rename(join(dir, '.later.tmp'), join(dir, 'later.md'));
    expect(await exitWithin(waiter)).toBe(0);
  });

  it('--timeout 1 exits 1 with a message; a tag only in code never counts', async () => {
    await writeFile(join(dir, 'r.md'), WITHOUT);
    const start = Date.now();
    const result = await runCli(['await-tag', 'r.md', '#done-fix', '--timeout', '1'], {
      cwd: dir,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("ERROR: Timed out after 1 s waiting for '#done-fix' in r.md\n");
    expect(result.stdout).toBe('');
    expect(Date.now() - start).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - start).toBeLessThan(10_000);
  });

  it('refuses an invalid tag, a missing directory, a directory as the file, a bad timeout', async () => {
    await writeFile(join(dir, 'r.md'), WITH);
    const bad = await runCli(['await-tag', 'r.md', 'done-fix'], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^ERROR: Invalid tag 'done-fix'/);

    const noDir = await runCli(['await-tag', 'nope/r.md', '#done-fix'], { cwd: dir });
    expect(noDir).toMatchObject({ code: 1, stderr: 'ERROR: Directory not found: nope\n' });

    const isDir = await runCli(['await-tag', '.', '#done-fix'], { cwd: dir });
    expect(isDir.code).toBe(1);
    expect(isDir.stderr).toMatch(/^ERROR: Not a regular file: \. \(.*--dir\)/);

    const timeout = await runCli(['await-tag', 'r.md', '#done-fix', '--timeout', 'soon'], {
      cwd: dir,
    });
    expect(timeout.code).toBe(1);
    expect(timeout.stderr).toMatch(/^ERROR: Invalid timeout 'soon'/);

    const missingTag = await runCli(['await-tag', 'r.md'], { cwd: dir });
    expect(missingTag.code).toBe(1);
    expect(missingTag.stderr).toMatch(/^ERROR: Name a file and a tag/);
  });
});

describe('engine await-tag --dir <path> <#tag>', () => {
  it('prints the file that already has the tag', async () => {
    await mkdir(join(dir, 'sessions', 's1'), { recursive: true });
    await writeFile(join(dir, 'sessions', 's1', 'r.md'), WITH);
    const result = await runCli(['await-tag', '--dir', 'sessions', '#done-fix'], { cwd: dir });
    expect(result).toEqual({ code: 0, stdout: 'sessions/s1/r.md\n', stderr: '' });
  });

  it('wakes on a file saved in a directory created after the start, and prints its path', async () => {
    await mkdir(join(dir, 'sessions'));
    await writeFile(join(dir, 'sessions', 'other.md'), WITHOUT);
    const waiter = await startWatching(['--dir', 'sessions', '#done-fix']);
    await mkdir(join(dir, 'sessions', 's2'));
    await writeFile(join(dir, 'sessions', 's2', '.r.md.tmp'), WITH);
    await rename(join(dir, 'sessions', 's2', '.r.md.tmp'), join(dir, 'sessions', 's2', 'r.md'));
    expect(await exitWithin(waiter)).toBe(0);
    expect(waiter.stdout()).toBe('sessions/s2/r.md\n');
  });

  it('is not blocked by a FIFO named x.md: it still wakes on a real file getting the tag', async () => {
    await mkdir(join(dir, 'sessions'));
    const waiter = await startWatching(['--dir', 'sessions', '#done-fix']);
    // Made after the watch is ready, so it is reported, and checked before the file below.
    execFileSync('mkfifo', [join(dir, 'sessions', 'x.md')]);
    await writeFile(join(dir, 'sessions', 'r.md'), WITH);
    expect(await exitWithin(waiter)).toBe(0);
    expect(waiter.stdout()).toBe('sessions/r.md\n');
  });

  it('times out with a message naming the directory', async () => {
    await mkdir(join(dir, 'sessions'));
    const result = await runCli(
      ['await-tag', '--dir', 'sessions', '#done-fix', '--timeout', '0.5'],
      { cwd: dir },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "ERROR: Timed out after 0.5 s waiting for '#done-fix' in sessions\n",
    );
  });

  it('refuses a missing directory and a second positional', async () => {
    const missing = await runCli(['await-tag', '--dir', 'nope', '#done-fix'], { cwd: dir });
    expect(missing).toMatchObject({ code: 1, stderr: 'ERROR: Directory not found: nope\n' });
    const extra = await runCli(['await-tag', '--dir', '.', 'r.md', '#done-fix'], { cwd: dir });
    expect(extra.code).toBe(1);
    expect(extra.stderr).toMatch(/^ERROR: With --dir, give only the tag/);
  });
});
